import { BRIDGE_WS_PATH } from '../api/bridge/endpoint.js';
import type { BridgeTokens } from '../auth/bridge-tokens.js';
import type { CredentialBox } from '../auth/credential-box.js';
import type { Account } from '../domain/account.js';
import { brokerIdentity } from '../domain/broker-identity.js';
import { withDefaults } from '../domain/copy-rule.js';
import { Decimal } from '../domain/decimal.js';
import type { Store } from '../store/store.js';
import type { DemoBrokers } from './demo-brokers.js';
import { DEMO_EMAIL } from './seed.js';

/** Names the demo's bridge account at the simulator (meta.demoKey), so a restart finds it. */
export const BRIDGE_DEMO_KEY = 'bridge-slave';
const SERVER = 'SimA-Bridge';
const GROUP = 'Demo group';
const BALANCE = '9000';

/**
 * The demo's self-hosted MetaTrader account (issue 47): an MT5 account of the simulated broker, connected through
 * the terminal bridge instead of the cloud, a Slave of the demo group at x1. Each start gives it a fresh bridge
 * token (the last start's expire at once) and has the simulator run a simulated EA with it, dialling this
 * service's own bridge endpoint, as a terminal on the user's machine would. Returns the account.
 */
export async function startDemoBridge(o: {
  store: Store;
  box: CredentialBox;
  tokens: BridgeTokens;
  brokers: DemoBrokers;
  baseUrl: string;
}): Promise<Account | null> {
  const user = await o.store.users.byEmail(DEMO_EMAIL);
  if (!user) return null;
  const sim =
    (await o.brokers.accounts()).find((a) => a.meta.demoKey === BRIDGE_DEMO_KEY) ??
    (await o.brokers.createAccount({
      balance: BALANCE,
      currency: 'USD',
      hedging: true,
      leverage: 100,
      meta: { demoKey: BRIDGE_DEMO_KEY, server: SERVER, platform: 'mt5', broker: 'SimA Markets' },
    }));
  const identity = brokerIdentity({ platform: 'platforma', server: SERVER, accountId: sim.login });
  const had = (await o.store.accounts.list(user.id)).find((a) => a.brokerIdentity === identity);
  // Removed by the user: the demo leaves it removed.
  if (had?.removedAt) return null;
  const account = had ?? (await create(o, user.id, sim.login, identity));
  const issued = (await o.tokens.list(account.id)).length
    ? await o.tokens.rotate(account.id, 0)
    : await o.tokens.create(account.id);
  const url = `${o.baseUrl.replace(/^http/, 'ws')}${BRIDGE_WS_PATH}`;
  await o.brokers.startEa({ accountId: sim.id, url, token: issued.token });
  return account;
}

async function create(
  o: { store: Store; box: CredentialBox },
  userId: string,
  login: string,
  identity: string,
): Promise<Account> {
  const group = (await o.store.accounts.listGroups(userId)).find((g) => g.name === GROUP);
  const account = await o.store.accounts.create({
    userId,
    platform: 'platforma',
    role: 'slave',
    groupId: group?.id ?? null,
    name: `Demo MT5 Slave (self-hosted bridge, ${login})`,
    brokerAccountId: login,
    brokerAccountNumber: login,
    brokerName: SERVER,
    environment: 'demo',
    currency: 'USD',
    balance: new Decimal(BALANCE),
    equity: new Decimal(BALANCE),
    brokerIdentity: identity,
    credentialsEnc: o.box.seal({ connection: 'bridge', login, server: SERVER }),
  });
  await o.store.accounts.setRule(account.id, withDefaults({ sizing: { mode: 'multiplier', multiplier: '1' } }));
  return account;
}
