import { Type } from 'typebox';
import type { Account } from '../../domain/account.js';
import type { ConnectionTest } from '../../domain/connection-test.js';
import { dec } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { Role } from '../../domain/types.js';
import type { ApiDeps } from '../deps.js';
import { AccountSchema, OPEN, toAccountJson } from '../schemas.js';

const NullableNumber = Type.Union([Type.Number(), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const ConnectionTestSchema = Type.Object(
  {
    ok: Type.Boolean({ description: 'true when every read succeeded and the broker allows trading' }),
    checkedAt: Type.String(),
    balance: NullableNumber,
    equity: NullableNumber,
    currency: NullableString,
    symbols: Type.Union([Type.Number(), Type.Null()], {
      description: 'how many symbols the broker lists for the account; null where the platform has no symbol list',
    }),
    positions: NullableNumber,
    orders: NullableNumber,
    tradingAllowed: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'as the broker reports it; null when the platform does not say',
    }),
    failedRead: Type.Union([Type.String(), Type.Null()], {
      description: 'account, symbols, positions or orders: the read the broker refused',
    }),
    error: Type.Union([Type.String(), Type.Null()], { description: "the broker's words when a read was refused" }),
  },
  { ...OPEN, description: 'what the broker answered to the reads made right after connecting (open point)' },
);

/** The account record plus its last connection test: the answer of every connect route and of the test routes. */
export const TestedAccountSchema = Type.Object(
  { ...AccountSchema.properties, connectionTest: Type.Union([ConnectionTestSchema, Type.Null()]) },
  OPEN,
);

export const toTestJson = (t: ConnectionTest) => ({
  ...t,
  // Tests recorded before the symbol count was read have none.
  symbols: t.symbols ?? null,
  balance: t.balance === null ? null : Number(t.balance),
  equity: t.equity === null ? null : Number(t.equity),
});

const words = (err: unknown) =>
  err instanceof AppError ? err.message : err instanceof Error ? err.message : String(err);

/**
 * Reads the account as the copier will: its funds, the symbols it may trade, open positions and pending orders,
 * and whether it may trade.
 * The first refused read ends the test with the broker's words; nothing is written here.
 */
export async function readConnectionTest(deps: ApiDeps, account: Account, now = new Date()): Promise<ConnectionTest> {
  const t: ConnectionTest = {
    ok: false,
    checkedAt: now.toISOString(),
    balance: null,
    equity: null,
    currency: null,
    symbols: null,
    positions: null,
    orders: null,
    tradingAllowed: null,
    failedRead: null,
    error: null,
  };
  let read = 'account';
  try {
    const adapter = await deps.adapters.forAccount(account);
    const info = await adapter.accountInfo();
    Object.assign(t, {
      balance: info.balance.toString(),
      equity: info.equity.toString(),
      currency: info.currency,
      tradingAllowed: info.tradingAllowed ?? null,
    });
    if (adapter.listSymbols) {
      read = 'symbols';
      t.symbols = (await adapter.listSymbols()).length;
    }
    read = 'positions';
    t.positions = (await adapter.listPositions()).length;
    read = 'orders';
    t.orders = (await adapter.listOrders()).length;
  } catch (err) {
    return { ...t, failedRead: read, error: words(err) };
  }
  if (t.symbols === 0) return { ...t, error: 'the broker lists no symbols for this account: nothing could be copied' };
  if (t.tradingAllowed === false)
    return { ...t, error: 'the broker does not allow trading on this account (read-only or close-only access)' };
  return { ...t, ok: true };
}

/**
 * Records a test and what it means for the account: a pass makes an unverified account connected again (and
 * its funds current), a failure makes it unverified with the broker's words, so it cannot be assigned or copy.
 */
export async function applyConnectionTest(deps: ApiDeps, account: Account, t: ConnectionTest): Promise<void> {
  await deps.store.connectionTests.put(account.id, t);
  if (t.balance !== null && t.equity !== null)
    await deps.store.accounts.setFunds(account.id, dec(t.balance), dec(t.equity));
  const status = t.ok ? (account.status === 'unverified' ? 'connected' : null) : 'unverified';
  if (!status || status === account.status) return;
  const reason = t.ok ? null : `connection test failed: ${t.error}`;
  await deps.store.accounts.setStatus(account.id, status, reason);
  await deps.store.events.emit([
    {
      userId: account.userId,
      accountId: account.id,
      type: 'account.status_changed',
      payload: { before: account.status, after: status, reason: reason ?? 'connection test passed' },
    },
  ]);
}

/**
 * Last step of every connect route: test the account, and only when the test passed put a new account in the
 * group the user chose (checked before it was stored). The answer shows the test either way.
 */
export async function testAndPlace(
  deps: ApiDeps,
  account: Account,
  place: { groupId: string | null; role: Role } | null,
): Promise<ReturnType<typeof toAccountJson> & { connectionTest: ReturnType<typeof toTestJson> }> {
  const t = await readConnectionTest(deps, account);
  await applyConnectionTest(deps, account, t);
  if (t.ok && place?.groupId) await deps.store.accounts.setRoleAndGroup(account.id, place.role, place.groupId);
  return { ...toAccountJson((await deps.store.accounts.byId(account.id))!), connectionTest: toTestJson(t) };
}
