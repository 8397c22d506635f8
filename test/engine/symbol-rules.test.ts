import { describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { newId } from '../../src/domain/ids.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { engineOnStore, seedGroup, storeCases } from './copy-harness.js';

/**
 * Per-symbol overrides and the minimum trade amount, end to end on both stores: the Master trades EURUSD and gold;
 * each Slave copies by its override for the symbol (or skips it, symbol_off), and a copy worth less than the
 * Slave's minTradeAmount is skipped with the figures (trade_amount_below_minimum).
 */
const stores = await storeCases();

describe.each(stores)('per-symbol overrides and minTradeAmount (%s store)', (_name, db) => {
  const broker = new SimBroker({ seed: 11 });
  const engine = engineOnStore(db, broker);

  it('sizes by the override, skips an override off and a copy below the minimum amount', async () => {
    broker.setPrice('EURUSD', '1.10000');
    const g = await seedGroup(engine().store, broker, {
      slaves: [
        { rule: { symbolOverrides: { XAUUSD: { multiplier: '0.5' }, EURUSD: { copy: false } } } },
        // 0.1 lot of EURUSD is worth about 11,000 USD.
        { rule: { minTradeAmount: '20000' } },
        { rule: { minTradeAmount: '5000' } },
      ],
    });
    await engine().watcher.stop();
    await engine().start();
    for (const symbol of ['EURUSD', 'XAUUSD'])
      broker.placeOrder(g.masterSim, { symbol, side: 'buy', type: 'market', volume: dec('0.1'), tag: newId('int') });
    await engine().idle();
    const trades = await engine().store.trades.listTrades(g.userId, { limit: 5 });
    const rows = (await Promise.all(trades.map((t) => engine().store.trades.intentsOfTrade(t.id)))).flat();
    const of = (i: number, symbol: string) => {
      const r = rows.find((x) => x.slaveAccountId === g.slaves[i]!.account.id && x.symbol === symbol)!;
      return r.state === 'skipped' ? r.skipReason!.split(':')[0] : `${r.state} ${r.plannedVolume}`;
    };
    expect(of(0, 'EURUSD')).toBe('symbol_off');
    expect(of(0, 'XAUUSD')).toBe('confirmed 0.05');
    expect(of(1, 'EURUSD')).toBe('trade_amount_below_minimum');
    expect(of(2, 'EURUSD')).toBe('confirmed 0.1');
    expect(broker.positions(g.slaves[0]!.sim).map((p) => `${p.symbol} ${p.volume}`)).toEqual(['XAUUSD 0.05']);
  }, 30_000);
});
