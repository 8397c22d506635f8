import { describe, expect, it } from 'vitest';
import { DealStatus, TradeSide } from '../../protocols/ctrader/enums.js';
import type { DealMsg, Envelope, OrderMsg } from '../../protocols/ctrader/messages.js';
import { PT } from '../../protocols/ctrader/payload-types.js';
import { CTraderAdapter, DEAL_PAGE_ROWS } from './adapter.js';
import type { CTraderConnection } from './connection.js';

const WEEK_MS = 604_800_000;
const DAY_MS = 24 * 3600 * 1000;

interface Asked {
  fromTimestamp: number;
  toTimestamp: number;
  maxRows: number;
}

/**
 * A connection whose deal list behaves as the protocol text describes: it refuses a window longer than a week,
 * serves the oldest deals of the window first, at most `cap` of them (and never more than maxRows), with hasMore.
 */
function stubConnection(deals: DealMsg[], orders: OrderMsg[] = [], cap = 3) {
  const asked: Asked[] = [];
  const conn = {
    onAccountEvent: () => () => undefined,
    ensureAccount: async () => undefined,
    accountSession: () => 1,
    accountRequest: async (_ctid: string, payloadType: number, body: Record<string, unknown>): Promise<Envelope[]> => {
      if (payloadType === PT.SYMBOLS_LIST_REQ)
        return [{ payloadType: PT.SYMBOLS_LIST_RES, payload: { symbol: [{ symbolId: '1', symbolName: 'EURUSD' }] } }];
      if (payloadType === PT.SYMBOL_BY_ID_REQ)
        return [
          {
            payloadType: PT.SYMBOL_BY_ID_RES,
            payload: { symbol: [{ symbolId: '1', digits: 5, pipPosition: 4, lotSize: '10000000' }] },
          },
        ];
      if (payloadType === PT.ORDER_LIST_REQ) {
        const from = Number(body.fromTimestamp);
        const to = Number(body.toTimestamp);
        const order = orders.filter((o) => {
          const t = Number(o.tradeData.openTimestamp);
          return t >= from && t <= to;
        });
        return [{ payloadType: PT.ORDER_LIST_RES, payload: { order, hasMore: false } }];
      }
      if (payloadType === PT.DEAL_LIST_REQ) {
        const q = {
          fromTimestamp: Number(body.fromTimestamp),
          toTimestamp: Number(body.toTimestamp),
          maxRows: Number(body.maxRows),
        };
        asked.push(q);
        if (q.toTimestamp - q.fromTimestamp > WEEK_MS) throw new Error('INVALID_REQUEST: window longer than a week');
        const inWindow = deals
          .filter(
            (d) => Number(d.executionTimestamp) >= q.fromTimestamp && Number(d.executionTimestamp) <= q.toTimestamp,
          )
          .sort((a, b) => Number(a.executionTimestamp) - Number(b.executionTimestamp));
        const rows = inWindow.slice(0, Math.min(cap, q.maxRows || Infinity));
        return [{ payloadType: PT.DEAL_LIST_RES, payload: { deal: rows, hasMore: rows.length < inWindow.length } }];
      }
      throw new Error(`not stubbed: payload type ${payloadType}`);
    },
  };
  return { conn: conn as unknown as CTraderConnection, asked };
}

let nextId = 100;
function deal(at: number, o: Partial<DealMsg> = {}): DealMsg {
  const id = String(nextId++);
  return {
    dealId: id,
    orderId: `o${id}`,
    positionId: `p${id}`,
    volume: '100000',
    filledVolume: '100000',
    symbolId: '1',
    createTimestamp: String(at),
    executionTimestamp: String(at),
    executionPrice: 1.0845,
    tradeSide: TradeSide.BUY,
    dealStatus: DealStatus.FILLED,
    ...o,
  };
}

const adapterOn = (conn: CTraderConnection) => new CTraderAdapter({ connection: conn, ctidTraderAccountId: '7' });

describe('cTrader listDeals over the deal list', () => {
  it('splits a long window into spans of at most a week, pages while hasMore, and returns every deal once, oldest first', async () => {
    const now = Date.now();
    const since = new Date(now - 20 * DAY_MS);
    const burst = now - 10 * DAY_MS;
    const deals = [
      ...Array.from({ length: 3 }, () => deal(burst)),
      ...Array.from({ length: 12 }, (_, i) => deal(since.getTime() + 1 + i * (DAY_MS + 1234))),
      deal(now - 1000),
    ];
    const { conn, asked } = stubConnection([...deals].reverse());
    const out = await adapterOn(conn).listDeals(since);

    expect(out.map((d) => d.id).sort()).toEqual(deals.map((d) => String(d.dealId)).sort());
    const times = out.map((d) => Date.parse(d.time));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    for (const q of asked) {
      expect(q.toTimestamp - q.fromTimestamp).toBeLessThanOrEqual(WEEK_MS);
      expect(q.maxRows).toBe(DEAL_PAGE_ROWS);
    }
    // Three spans cover the 20 days, and the spans with more than 3 deals took more than one page.
    const spanEnds = new Set(asked.map((q) => q.toTimestamp));
    expect(spanEnds.size).toBe(3);
    expect(asked.length).toBeGreaterThan(3);
  });

  it('deals sharing a millisecond across a page boundary are all listed', async () => {
    const t = Date.now() - 60_000;
    // Pages of 3: [a, b, c1], then from c's millisecond [c1, c2, c3], then past it [d].
    const deals = [deal(t), deal(t + 1), deal(t + 2), deal(t + 2), deal(t + 2), deal(t + 3)];
    const { conn, asked } = stubConnection(deals);
    const out = await adapterOn(conn).listDeals(new Date(t - 1));
    expect(out.map((d) => d.id)).toEqual(deals.map((d) => String(d.dealId)));
    expect(asked.map((q) => q.fromTimestamp)).toEqual([t - 1, t + 2, t + 2, t + 3]);
  });

  it('a window without deals is one request, and no order-history read', async () => {
    const now = Date.now();
    const { conn, asked } = stubConnection([deal(now - 2 * DAY_MS)]);
    expect(await adapterOn(conn).listDeals(new Date(now - DAY_MS))).toEqual([]);
    expect(asked).toHaveLength(1);
  });

  it('keeps only executed deals and reads each as the port wants it: filled volume in lots, entry, side, price, tag', async () => {
    const t0 = Date.now() - 60_000;
    const open = deal(t0, {
      orderId: '501',
      positionId: '900',
      volume: '300000',
      filledVolume: '200000',
      dealStatus: DealStatus.PARTIALLY_FILLED,
    });
    const rejectedDeal = deal(t0 + 5, { orderId: '502', positionId: '901', dealStatus: DealStatus.REJECTED });
    const close = deal(t0 + 10, {
      orderId: '503',
      positionId: '900',
      tradeSide: TradeSide.SELL,
      executionPrice: 1.0851,
      filledVolume: '200000',
      commission: '-12',
      moneyDigits: 2,
      closePositionDetail: {
        entryPrice: 1.0845,
        grossProfit: '120',
        swap: '-35',
        commission: '-24',
        balance: '1000000',
        closedVolume: '200000',
        moneyDigits: 2,
      },
    });
    const orders = [
      {
        orderId: '501',
        clientOrderId: 'tag-open',
        tradeData: { symbolId: '1', volume: '300000', tradeSide: TradeSide.BUY, openTimestamp: String(t0 - 1) },
        orderType: 1,
        orderStatus: 2,
      },
      // The close order (ProtoOAClosePositionReq) carries no tag of its own.
      {
        orderId: '503',
        tradeData: { symbolId: '1', volume: '200000', tradeSide: TradeSide.SELL, openTimestamp: String(t0 + 9) },
        orderType: 1,
        orderStatus: 2,
      },
    ] as unknown as OrderMsg[];
    const { conn } = stubConnection([close, rejectedDeal, open], orders, 10);
    const out = await adapterOn(conn).listDeals(new Date(t0 - 1000));
    // closePositionDetail's gross profit and swap, the deal's own commission, in units of 10^-moneyDigits.
    const money = (v: { toString(): string } | null | undefined) => v?.toString() ?? null;
    expect(out.map((d) => [money(d.profit), money(d.swap), money(d.commission)])).toEqual([
      [null, null, null],
      ['1.2', '-0.35', '-0.12'],
    ]);
    expect(
      out.map((d) => ({
        id: d.id,
        orderId: d.orderId,
        positionId: d.positionId,
        symbol: d.symbol,
        side: d.side,
        volume: d.volume.toString(),
        price: d.price?.toString(),
        entry: d.entry,
        time: d.time,
        tag: d.tag,
      })),
    ).toEqual([
      {
        id: String(open.dealId),
        orderId: '501',
        positionId: '900',
        symbol: 'EURUSD',
        side: 'buy',
        volume: '0.02',
        price: '1.0845',
        entry: 'in',
        time: new Date(t0).toISOString(),
        tag: 'tag-open',
      },
      {
        id: String(close.dealId),
        orderId: '503',
        positionId: '900',
        symbol: 'EURUSD',
        side: 'sell',
        volume: '0.02',
        price: '1.0851',
        entry: 'out',
        time: new Date(t0 + 10).toISOString(),
        tag: 'tag-open',
      },
    ]);
  });

  it('ends even when a server keeps saying hasMore over the same millisecond', async () => {
    const at = Date.now() - 5000;
    const same = Array.from({ length: 5 }, () => deal(at));
    const { conn, asked } = stubConnection(same, [], 2);
    const out = await adapterOn(conn).listDeals(new Date(at - 1));
    // Pages of 2 within one millisecond: the first page, a page with nothing new, then past that millisecond.
    expect(out.length).toBe(2);
    expect(asked.length).toBeLessThan(10);
  });
});
