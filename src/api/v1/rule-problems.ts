import type { Account } from '../../domain/account.js';
import { validateRule, type CopyRule } from '../../domain/copy-rule.js';
import { invalid } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';

/**
 * A Slave's rule checked against its own platform's capabilities and, for the filters on what the Master's trades
 * carry (magic number, comment), its group's Master's; a group without a Master yet checks the Slave's side only
 * (docs/copy-rules.md says what a Master set later without them does). Throws the 400 naming each field.
 */
export async function refuseUnworkableRule(deps: ApiDeps, account: Account, rule: CopyRule): Promise<void> {
  const group = account.groupId ? await deps.store.accounts.groupView(account.userId, account.groupId) : null;
  const master = group?.master ?? null;
  const problems = validateRule(
    rule,
    deps.adapters.capabilities(account.platform),
    master ? deps.adapters.capabilities(master.platform) : null,
  );
  if (problems.length > 0) throw invalid(`the copy rule cannot work: ${problems.join('; ')}`, { problems });
}
