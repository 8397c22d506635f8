import { describe, expect, it } from 'vitest';
import { dec } from '../domain/decimal.js';
import type { CopyIntent } from '../domain/ledger-types.js';
import { confirmed, rejected } from '../platforms/adapter.js';
import { testAccount } from '../../test/helpers/account.js';
import type { TradeLike } from './ledger.js';
import { outcomeWrite } from './outcome-ledger.js';
import type { OutcomeRow } from './outcome-confirmed.js';

const master = testAccount('m', { role: 'master' });
const trade: TradeLike = {
  orderType: 'market',
  masterPositionId: 'mp1',
  masterOrderId: null,
  fillPrice: dec('1.08500'),
  side: 'buy',
  actionAt: new Date(0),
};
const row = (o: Partial<CopyIntent> = {}): OutcomeRow => ({
  id: 'int_1',
  action: 'open' as const,
  symbol: 'EURUSD',
  side: 'buy' as const,
  plannedVolume: dec('0.2'),
  tag: 'ct1',
  targetId: null,
  ...o,
});
const place = {
  kind: 'place' as const,
  req: {
    symbol: 'EURUSD',
    side: 'buy' as const,
    type: 'market' as const,
    volume: dec('0.2'),
    price: null,
    stopLoss: null,
    takeProfit: null,
    tag: 'ct1',
  },
  link: 'position' as const,
  masterItemId: 'mp1',
};

describe('outcomeWrite: Decimals in the ledger, text in the payloads', () => {
  it('a confirmed open keeps Decimals for the intent and the link, and writes payload decimals as text', () => {
    const w = outcomeWrite(
      master,
      'trd_1',
      trade,
      row(),
      's',
      place,
      confirmed({ positionId: 'sp1', filledVolume: dec('0.2'), fillPrice: dec('1.08510') }),
      {},
    );
    expect(w.update?.filledVolume?.toString()).toBe('0.2');
    expect(w.update?.slippage?.toString()).toBe('0.0001');
    const up = w.links?.[0];
    expect(up?.op === 'upsert' && up.link.volume.toString()).toBe('0.2');
    const payloads = Object.fromEntries((w.events ?? []).map((e) => [e.type, e.payload]));
    expect(payloads['copy.confirmed']).toMatchObject({
      volume: '0.2',
      filledVolume: '0.2',
      fillPrice: '1.0851',
      slippage: '0.0001',
    });
    expect(payloads['position.opened']).toMatchObject({ volume: '0.2', price: '1.0851' });
  });

  it('a close sized from a link PostgreSQL resized ("0.20") says "0.2", as a volume never resized would', () => {
    const fromSql = dec('0.20');
    const w = outcomeWrite(
      master,
      'trd_2',
      trade,
      row({ action: 'close', side: 'buy', plannedVolume: fromSql, targetId: 'sp1' }),
      's',
      { kind: 'close', positionId: 'sp1', volume: null, before: fromSql },
      confirmed({ fillPrice: dec('1.08400') }),
      {},
    );
    const closed = w.events?.find((e) => e.type === 'position.closed');
    expect(closed?.payload).toMatchObject({ volume: '0.2', price: '1.084' });
  });

  it('a partial close resizes the link by the Decimal filled, and a refusal reports the planned volume as text', () => {
    const w = outcomeWrite(
      master,
      'trd_3',
      trade,
      row({ action: 'reduce', plannedVolume: dec('0.05'), targetId: 'sp1' }),
      's',
      { kind: 'close', positionId: 'sp1', volume: dec('0.05'), before: dec('0.2') },
      confirmed({ filledVolume: dec('0.05') }),
      {},
    );
    const adj = w.links?.[0];
    expect(adj?.op === 'adjust' && adj.by.toString()).toBe('-0.05');
    expect(w.events?.find((e) => e.type === 'position.modified')?.payload).toMatchObject({ volume: '0.15' });
    const r = outcomeWrite(master, 'trd_4', trade, row({ plannedVolume: null }), 's', place, rejected('x', 'no'), {});
    expect(r.events?.[0]?.payload).toMatchObject({ volume: '0', code: 'x' });
  });

  it("writes each hop's latency to the microsecond, and leaves the sender's object as it was", () => {
    const latency = { plan: 0.123456789012345, record: 2.0004999, send: 7, ack: 0.0004 };
    const w = outcomeWrite(master, 'trd_5', trade, row(), 's', place, confirmed({ positionId: 'sp1' }), { latency });
    expect(w.update?.latency).toEqual({ plan: 0.123, record: 2, send: 7, ack: 0 });
    expect(latency.plan).toBe(0.123456789012345);
  });

  it("a cancel refused because the Slave's copy filled closes the order link as filled; a modify_order keeps it", () => {
    const refused = rejected('order_filled', 'order so1 had already filled (position sp9); nothing was cancelled');
    const cancel = outcomeWrite(
      master,
      'trd_6',
      trade,
      row({ action: 'order_cancelled', targetId: 'so1' }),
      's',
      { kind: 'cancel', orderId: 'so1' },
      refused,
      {},
    );
    expect(cancel.links).toEqual([
      { op: 'close', key: { slaveAccountId: 's', kind: 'order', slavePositionId: 'so1' }, reason: 'filled' },
    ]);
    const modify = outcomeWrite(
      master,
      'trd_7',
      trade,
      row({ action: 'order_modified', targetId: 'so1' }),
      's',
      { kind: 'modify_order', orderId: 'so1', change: {} },
      refused,
      {},
    );
    expect(modify.links ?? []).toEqual([]);
  });
});
