import { describe, expect, it } from 'vitest';
import {
  checkExecutionColumns,
  columnIndex,
  parseAccountDetails,
  parseAllAccounts,
  parseExecutionRow,
  parseInstrumentDetails,
  parseOrderRow,
  parsePositionRow,
  parseTradeConfig,
  rowsOf,
} from './parse.js';

// Column lists and rows as in the TradeLocker reference examples (11-column position, 22-column order).
const POSITION_COLS = [
  'id',
  'tradableInstrumentId',
  'routeId',
  'side',
  'qty',
  'avgPrice',
  'stopLossId',
  'takeProfitId',
  'openDate',
  'unrealizedPl',
  'strategyId',
];
const POSITION_ROW = [
  '7277816997907787135',
  '206',
  '451',
  'buy',
  '0.25',
  '1.08431',
  '7277816997907787200',
  null,
  '1767886346666',
  '-3.50',
  'ctabc123',
];
const ORDER_COLS = [
  'id',
  'tradableInstrumentId',
  'routeId',
  'qty',
  'side',
  'type',
  'status',
  'filledQty',
  'avgPrice',
  'price',
  'stopPrice',
  'validity',
  'expireDate',
  'createdDate',
  'lastModified',
  'isOpen',
  'positionId',
  'stopLoss',
  'stopLossType',
  'takeProfit',
  'takeProfitType',
  'strategyId',
];
const ORDER_ROW = [
  '7277816997907787999',
  '206',
  '451',
  '1.50',
  'sell',
  'limit',
  'New',
  '0',
  null,
  '1.09500',
  '0',
  'GTC',
  null,
  '1767886346000',
  '1767886347000',
  'true',
  null,
  '1.10000',
  'absolute',
  '1.08000',
  'absolute',
  '',
];
// The official client's ExecutionsColumns (tradelocker-python types.py), in its order.
const EXECUTION_COLS = ['id', 'price', 'side', 'createdDate', 'qty', 'orderId', 'positionId', 'tradableInstrumentId'];
const EXECUTION_ROW = [
  '7277816997908000001',
  '1.08452',
  'sell',
  '1767886350123',
  '0.10',
  '7277816997907787999',
  '7277816997907787135',
  '206',
];
const ACCOUNT_COLS = ['balance', 'projectedBalance', 'availableFunds', 'openGrossPnL'];

/** Moves columns and row cells together, the way a server with another column order would send them. */
function permute(cols: string[], rows: unknown[][], seed: number): { cols: string[]; rows: unknown[][] } {
  const idx = cols.map((_, i) => i);
  let s = seed;
  for (let i = idx.length - 1; i > 0; i--) {
    s = (s * 48271) % 2147483647;
    const j = s % (i + 1);
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return { cols: idx.map((i) => cols[i]!), rows: rows.map((r) => idx.map((i) => r[i])) };
}

function config(positions: string[], orders: string[], account = ACCOUNT_COLS) {
  const panel = (cols: string[]) => ({ id: 'x', title: 'x', columns: cols.map((id) => ({ id })) });
  return {
    s: 'ok',
    d: {
      positionsConfig: panel(positions),
      ordersConfig: panel(orders),
      ordersHistoryConfig: panel(orders),
      filledOrdersConfig: panel(['id', 'price']),
      accountDetailsConfig: panel(account),
      rateLimits: [
        { rateLimitType: 'GET_POSITIONS', measure: 'SECONDS', intervalNum: 1, limit: 2 },
        { rateLimitType: 'PLACE_ORDER', measure: 'MINUTES', intervalNum: 1, limit: 60 },
      ],
    },
  };
}

const symbolOf = (tid: number) => (tid === 206 ? 'EURUSD' : `#${tid}`);

describe('TradeLocker parse', () => {
  it('reads a position row by column id, keeping 64-bit ids as exact strings', () => {
    const cfg = parseTradeConfig(config(POSITION_COLS, ORDER_COLS));
    const p = parsePositionRow(POSITION_ROW, cfg.positions, symbolOf);
    expect(p.position).toMatchObject({
      id: '7277816997907787135',
      symbol: 'EURUSD',
      side: 'buy',
      tag: 'ctabc123',
      openedAt: new Date(1767886346666).toISOString(),
    });
    expect(p.position.volume.toString()).toBe('0.25');
    expect(p.position.openPrice.toString()).toBe('1.08431');
    expect(p.stopLossId).toBe('7277816997907787200');
    expect(p.takeProfitId).toBeNull();
  });

  for (const seed of [1, 7, 42, 1234, 99991]) {
    it(`gives the same result when the server shuffles the columns (seed ${seed})`, () => {
      const plain = parseTradeConfig(config(POSITION_COLS, ORDER_COLS));
      const pos = permute(POSITION_COLS, [POSITION_ROW], seed);
      const ord = permute(ORDER_COLS, [ORDER_ROW], seed + 1);
      expect(pos.cols).not.toEqual(POSITION_COLS);
      const shuffled = parseTradeConfig(config(pos.cols, ord.cols));
      expect(parsePositionRow(pos.rows[0], shuffled.positions, symbolOf)).toEqual(
        parsePositionRow(POSITION_ROW, plain.positions, symbolOf),
      );
      expect(parseOrderRow(ord.rows[0], shuffled.orders, symbolOf)).toEqual(
        parseOrderRow(ORDER_ROW, plain.orders, symbolOf),
      );
    });
  }

  it('reads an order row: limit price from price, stop price from stopPrice, "" strategyId as no tag', () => {
    const cfg = parseTradeConfig(config(POSITION_COLS, ORDER_COLS));
    const o = parseOrderRow(ORDER_ROW, cfg.orders, symbolOf).order;
    expect(o).toMatchObject({
      id: '7277816997907787999',
      side: 'sell',
      type: 'limit',
      status: 'pending',
      tag: null,
      positionId: null,
    });
    expect(o.price?.toString()).toBe('1.095');
    expect(o.stopLoss?.toString()).toBe('1.1');
    const stopRow = [...ORDER_ROW];
    stopRow[ORDER_COLS.indexOf('type')] = 'stop';
    stopRow[ORDER_COLS.indexOf('price')] = '0';
    stopRow[ORDER_COLS.indexOf('stopPrice')] = '1.07';
    expect(parseOrderRow(stopRow, cfg.orders, symbolOf).order.price?.toString()).toBe('1.07');
  });

  it('reads an execution row by column id, whatever the served order; it has no open/close and no tag column', () => {
    const plain = columnIndex({ columns: EXECUTION_COLS.map((id) => ({ id })) }, 'filledOrdersConfig');
    const e = parseExecutionRow(EXECUTION_ROW, plain);
    expect(e).toMatchObject({
      id: '7277816997908000001',
      orderId: '7277816997907787999',
      positionId: '7277816997907787135',
      tradableInstrumentId: 206,
      side: 'sell',
      timeMs: 1767886350123,
    });
    expect(e.qty.toString()).toBe('0.1');
    expect(e.price?.toString()).toBe('1.08452');
    for (const seed of [3, 17, 4242]) {
      const shuffled = permute(EXECUTION_COLS, [EXECUTION_ROW], seed);
      const cols = columnIndex({ columns: shuffled.cols.map((id) => ({ id })) }, 'filledOrdersConfig');
      expect(parseExecutionRow(shuffled.rows[0], cols)).toEqual(e);
    }
    const noPosition = [...EXECUTION_ROW];
    noPosition[EXECUTION_COLS.indexOf('positionId')] = '0';
    expect(() => parseExecutionRow(noPosition, plain)).toThrow(/without positionId/);
    // The config lacking execution columns connects fine; asking for deals names what is missing.
    const cfg = parseTradeConfig(config(POSITION_COLS, ORDER_COLS));
    expect(() => checkExecutionColumns(cfg.filledOrders)).toThrow(/filledOrdersConfig lacks column\(s\) side, qty/);
    expect(() => checkExecutionColumns(plain)).not.toThrow();
  });

  it('maps the status vocabulary', () => {
    const cfg = parseTradeConfig(config(POSITION_COLS, ORDER_COLS));
    const withStatus = (status: string, isOpen = 'false') => {
      const r = [...ORDER_ROW];
      r[ORDER_COLS.indexOf('status')] = status;
      r[ORDER_COLS.indexOf('isOpen')] = isOpen;
      return parseOrderRow(r, cfg.orders, symbolOf).order.status;
    };
    expect(withStatus('Filled')).toBe('filled');
    expect(withStatus('Cancelled')).toBe('cancelled');
    expect(withStatus('Removed')).toBe('cancelled');
    expect(withStatus('Refused')).toBe('rejected');
    expect(withStatus('Unplaced')).toBe('rejected');
    expect(withStatus('None', 'true')).toBe('pending');
  });

  it('reads account details by id (JSON numbers) and served rate limits', () => {
    const cfg = parseTradeConfig(
      config(POSITION_COLS, ORDER_COLS, ['openGrossPnL', 'balance', 'availableFunds', 'projectedBalance']),
    );
    const d = parseAccountDetails(
      { s: 'ok', d: { accountDetailsData: [-12.5, 10000, 9000.25, 9987.5] } },
      cfg.accountDetails,
    );
    expect(d.get('balance')?.toString()).toBe('10000');
    expect(d.get('projectedBalance')?.toString()).toBe('9987.5');
    expect(cfg.rateLimits).toEqual([
      { rateLimitType: 'GET_POSITIONS', limit: 2, intervalMs: 1000 },
      { rateLimitType: 'PLACE_ORDER', limit: 60, intervalMs: 60_000 },
    ]);
  });

  it('refuses a config that lacks a column it needs, naming it', () => {
    expect(() =>
      parseTradeConfig(
        config(
          POSITION_COLS.filter((c) => c !== 'qty'),
          ORDER_COLS,
        ),
      ),
    ).toThrow(/positionsConfig lacks column\(s\) qty/);
  });

  it('reads all-accounts with string or number fields, and instrument details with tick ranges', () => {
    const accs = parseAllAccounts({
      accounts: [
        { id: '123456', name: 'Main', currency: 'USD', accNum: '2', accountBalance: '1000.50' },
        { id: 7, accNum: 1 },
      ],
    });
    expect(accs[0]).toMatchObject({ id: '123456', accNum: 2, currency: 'USD' });
    expect(accs[0]!.balance.toString()).toBe('1000.5');
    expect(accs[1]).toMatchObject({ id: '7', accNum: 1 });
    const spec = parseInstrumentDetails(
      {
        s: 'ok',
        d: {
          lotSize: 100000,
          lotStep: 0.01,
          minLot: 0.01,
          maxLot: null,
          tickSize: [
            { leftRangeLimit: 10, tickSize: 0.001 },
            { leftRangeLimit: 0, tickSize: 0.00001 },
          ],
        },
      },
      'EURUSD',
    );
    expect(spec.tickSize.toString()).toBe('0.00001');
    expect(spec.volumeStep.toString()).toBe('0.01');
    expect(spec.maxVolume.gt(1000)).toBe(true);
  });

  it('treats missing rows as empty and a non-list as an error', () => {
    expect(rowsOf({ s: 'ok', d: {} }, 'positions')).toEqual([]);
    expect(() => rowsOf({ s: 'ok', d: { positions: 'x' } }, 'positions')).toThrow();
  });
});
