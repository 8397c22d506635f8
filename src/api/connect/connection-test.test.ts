import { describe, expect, it } from 'vitest';
import type { Account } from '../../domain/account.js';
import { dec } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';
import { readConnectionTest } from './connection-test.js';

/** Only what the test reads: an adapter whose answers each case sets. */
function depsWith(adapter: {
  tradingAllowed?: boolean;
  positions?: () => Promise<unknown[]>;
  orders?: () => Promise<unknown[]>;
  symbols?: (() => Promise<string[]>) | null;
}): ApiDeps {
  const info = {
    balance: dec('1000.5'),
    equity: dec('990'),
    currency: 'USD',
    brokerAccountNumber: '1',
    ...(adapter.tradingAllowed === undefined ? {} : { tradingAllowed: adapter.tradingAllowed }),
  };
  return {
    adapters: {
      forAccount: async () => ({
        accountInfo: async () => info,
        listPositions: adapter.positions ?? (async () => [{}, {}]),
        listOrders: adapter.orders ?? (async () => []),
        ...(adapter.symbols === null ? {} : { listSymbols: adapter.symbols ?? (async () => ['EURUSD', 'XAUUSD']) }),
      }),
    },
  } as unknown as ApiDeps;
}
const account = { id: 'acc_1' } as Account;
const at = new Date('2026-12-07T06:00:00Z');

describe('readConnectionTest', () => {
  it('every read answered: ok, with what the broker said (trading allowed unknown is null)', async () => {
    expect(await readConnectionTest(depsWith({}), account, at)).toEqual({
      ok: true,
      checkedAt: '2026-12-07T06:00:00.000Z',
      balance: '1000.5',
      equity: '990',
      currency: 'USD',
      symbols: 2,
      positions: 2,
      orders: 0,
      tradingAllowed: null,
      failedRead: null,
      error: null,
    });
  });

  it('the symbols the broker lists are counted; none listed fails the test, no list at all (the bridge) does not', async () => {
    const none = await readConnectionTest(depsWith({ symbols: async () => [] }), account, at);
    expect(none).toMatchObject({ ok: false, symbols: 0, failedRead: null });
    expect(none.error).toMatch(/lists no symbols/);
    expect(await readConnectionTest(depsWith({ symbols: null }), account, at)).toMatchObject({
      ok: true,
      symbols: null,
    });
    const refused = async (): Promise<string[]> => {
      throw new AppError('broker_auth_failed', 'symbols: not permitted');
    };
    const t = await readConnectionTest(depsWith({ symbols: refused }), account, at);
    expect(t).toMatchObject({ ok: false, failedRead: 'symbols', error: 'symbols: not permitted', positions: null });
  });

  it('a broker that does not allow trading fails the test though every read answered', async () => {
    const t = await readConnectionTest(depsWith({ tradingAllowed: false }), account, at);
    expect(t).toMatchObject({ ok: false, tradingAllowed: false, failedRead: null, positions: 2 });
    expect(t.error).toMatch(/does not allow trading/);
  });

  it('a refused read ends the test there, with the broker words and the read named', async () => {
    const refused = async () => {
      throw new AppError('broker_auth_failed', 'TradeLocker refused: account disabled');
    };
    const t = await readConnectionTest(depsWith({ orders: refused }), account, at);
    expect(t).toMatchObject({
      ok: false,
      failedRead: 'orders',
      error: 'TradeLocker refused: account disabled',
      positions: 2,
      orders: null,
    });
  });
});
