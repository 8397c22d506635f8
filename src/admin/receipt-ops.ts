import { AppError } from '../domain/errors.js';
import { publicKeyFromPem } from '../receipts/receipt-key.js';
import { verifyAccount } from '../receipts/verify.js';
import type { Store } from '../store/store.js';

type Args = Record<string, unknown>;
/** An operation of ops.ts's shape (declared here: ops.ts imports this file). */
type ReceiptOp = (d: { store: Store }, args: Args) => Promise<unknown>;
const DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

function range(a: Args): { fromDay?: string; toDay?: string } {
  const out: { fromDay?: string; toDay?: string } = {};
  for (const [arg, key] of [
    ['from', 'fromDay'],
    ['to', 'toDay'],
  ] as const) {
    const v = a[arg];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string' || !DAY.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`)))
      throw new AppError('invalid_request', `--${arg} must be a UTC day, YYYY-MM-DD; got ${JSON.stringify(v)}`);
    out[key] = v;
  }
  if (out.fromDay && out.toDay && out.fromDay > out.toDay)
    throw new AppError('invalid_request', '--from must not be after --to');
  return out;
}

/**
 * The operator's receipt commands as named operations (see ops.ts): both only read. The caller passes the public
 * keys it read from the key file, so a verify through a running service's listener checks against the file the
 * operator named, not the service's.
 */
export const receiptOps: Record<string, ReceiptOp> = {
  'receipts.verify': async ({ store }, a) => {
    const pems = a.publicKeys;
    if (!Array.isArray(pems) || pems.length === 0 || !pems.every((p) => typeof p === 'string'))
      throw new AppError('invalid_request', 'publicKeys (the PEM public keys of the receipt key file) are required');
    const keys = (pems as string[]).map(publicKeyFromPem);
    const r = range(a);
    let ids: string[];
    if (typeof a.account === 'string' && a.account !== '') {
      if (!(await store.accounts.byId(a.account))) throw new AppError('not_found', `no account ${a.account}`);
      ids = [a.account];
    } else ids = await store.receipts.chainedAccounts();
    const accounts = [];
    for (const id of ids) accounts.push(await verifyAccount(store.receipts, keys, id, r));
    return { ok: accounts.every((x) => x.fault === null), accounts };
  },
  'receipts.export': async ({ store }, a) => {
    const account = typeof a.account === 'string' ? await store.accounts.byId(a.account) : null;
    if (!account) throw new AppError('not_found', `no account ${String(a.account)}`);
    const r = range(a);
    const receipts = [];
    for (let afterSeq = 0; ; ) {
      const page = await store.receipts.page(account.id, { afterSeq, limit: 1000, ...r });
      receipts.push(...page);
      if (page.length < 1000) break;
      afterSeq = page[page.length - 1]!.seq;
    }
    const prior = receipts[0] && receipts[0].seq > 1 ? await store.receipts.at(account.id, receipts[0].seq - 1) : null;
    const heads = await store.receipts.heads(account.id, r.fromDay, r.toDay);
    return {
      account: { id: account.id, name: account.name, platform: account.platform, number: account.brokerAccountNumber },
      from: r.fromDay ?? null,
      to: r.toDay ?? null,
      prior: prior ? { seq: prior.seq, hash: prior.hash } : null,
      receipts,
      heads,
    };
  },
};
