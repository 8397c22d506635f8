import { Decimal } from '../../domain/decimal.js';
import type { Order, OrderType, Side } from '../../domain/types.js';
import type { FaultOp, SimBrokerApi, SimInstrument } from '../contract.js';
import { type ColumnSet, panelConfig, toRow } from './columns.js';
import type { TlAccount, TlDirectory } from './directory.js';
import { type BarSide, bucketCount, bucketStart, type PriceHistory, RESOLUTIONS } from './price-history.js';
import { LevelError, resolveLevel } from './protective-levels.js';
import type { RateLimitEntry } from './rate-limits.js';
import { SESSION_ID, SESSION_STATUS_ID, sessionDetails, sessionStatus } from './sessions.js';
import {
  fillPrices,
  fillRow,
  findProtective,
  infoRouteId,
  instrumentDetails,
  instrumentListItem,
  orderRow,
  positionRow,
  protectiveRows,
  tradeRouteId,
  WIRE_STATUS,
} from './wire.js';

/** Thrown by handlers; the server writes `{s:"error", errmsg}` with this status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Reply {
  status: number;
  body?: unknown;
}

export interface RouteCtx {
  params: string[];
  query: URLSearchParams;
  body: Record<string, unknown>;
  acct: TlAccount;
  partialRatio?: number;
  /** Fault cancel_after_timeout: the order is taken and then cancelled or rejected instead of filled. */
  refuseAs?: 'cancelled' | 'rejected';
}

export interface Route {
  method: string;
  pattern: RegExp;
  /** Index in params of a path accountId that must agree with the accNum header. */
  accountParam?: number;
  rateType?: string;
  op: Exclude<FaultOp, '*'>;
  handler(ctx: RouteCtx): Reply;
}

export interface RouteDeps {
  broker: SimBrokerApi;
  directory: TlDirectory;
  columns: ColumnSet;
  rateLimits: RateLimitEntry[];
  historyPageSize: number;
  prices: PriceHistory;
  /** limits.QUOTES_HISTORY_BARS: most bars one /trade/history request may span. */
  historyBarsLimit: number;
}

/** strategyId: the docs say 31; the official client's tests accept 32 and refuse 33, as the servers do. */
export const STRATEGY_ID_MAX = 32;

const ok = (d?: unknown): Reply => ({ status: 200, body: d === undefined ? { s: 'ok' } : { s: 'ok', d } });

function num(v: unknown): Decimal | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v !== 'number' && typeof v !== 'string') throw new HttpError(400, 'expected a number');
  try {
    const d = new Decimal(v);
    if (!d.isFinite()) throw new Error('not finite');
    return d;
  } catch {
    throw new HttpError(400, `invalid number: ${String(v)}`);
  }
}

function msParam(q: URLSearchParams, name: string): Date | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw new HttpError(400, `${name} must be a timestamp in milliseconds`);
  return new Date(Number(v));
}

export function buildRoutes(deps: RouteDeps): Route[] {
  const { broker, columns } = deps;

  const instById = (v: unknown): SimInstrument => {
    const id = Number(v);
    const inst = Number.isInteger(id) ? broker.instrument(id) : null;
    if (!inst) throw new HttpError(400, `unknown tradableInstrumentId ${String(v)}`);
    return inst;
  };
  const instOf = (symbol: string): SimInstrument => {
    const inst = broker.instrument(symbol);
    if (!inst) throw new HttpError(500, `instrument ${symbol} vanished`);
    return inst;
  };
  const symbolFilter = (q: URLSearchParams) => {
    const t = q.get('tradableInstrumentId');
    return t ? instById(t).symbol : undefined;
  };

  /** Market-data routes address the instrument through its INFO route, as /trade/quotes does. */
  const infoInstrument = (query: URLSearchParams): SimInstrument => {
    const inst = instById(query.get('tradableInstrumentId'));
    if (Number(query.get('routeId')) !== infoRouteId(inst))
      throw new HttpError(400, 'routeId must be the instrument INFO route');
    deps.prices.record(broker.quote(inst.symbol));
    return inst;
  };
  const level = (inst: SimInstrument, side: Side, ref: () => Decimal, input: Parameters<typeof resolveLevel>[3]) => {
    try {
      return resolveLevel(inst, side, ref, input);
    } catch (err) {
      if (err instanceof LevelError) throw new HttpError(400, err.message);
      throw err;
    }
  };
  /** What a limit order would execute against right now: the ask for a buy, the bid for a sell. */
  const marketSide = (inst: SimInstrument, side: Side) => {
    const q = broker.quote(inst.symbol);
    return side === 'buy' ? q.ask : q.bid;
  };

  const orderRows = (cols: string[], simId: string, orders: Order[]) => {
    // Only the listed orders' deals: the account's whole history of deals grows with every trade.
    const prices = fillPrices(orders.flatMap((o) => broker.dealsOf(simId, { orderId: o.id })));
    return orders.map((o) => orderRow(cols, o, instOf(o.symbol), prices.get(o.id) ?? null));
  };

  const routes: Route[] = [];
  const add = (method: string, path: string, r: Omit<Route, 'method' | 'pattern' | 'accountParam'>) => {
    const accountParam = path.includes(':accountId') ? 0 : undefined;
    const pattern = new RegExp(`^${path.replace(/:[a-zA-Z]+/g, '([^/]+)')}$`);
    routes.push({ method, pattern, ...(accountParam === undefined ? {} : { accountParam }), ...r });
  };

  add('GET', '/trade/config', {
    op: 'read',
    handler: () =>
      ok({
        customerAccess: {
          orders: true,
          ordersHistory: true,
          filledOrders: true,
          positions: true,
          symbolInfo: true,
          marketDepth: true,
        },
        positionsConfig: panelConfig('positions', 'Positions', columns.positions),
        ordersConfig: panelConfig('orders', 'Orders', columns.orders),
        ordersHistoryConfig: panelConfig('ordersHistory', 'Orders History', columns.ordersHistory),
        filledOrdersConfig: panelConfig('filledOrders', 'Filled Orders', columns.filledOrders),
        accountDetailsConfig: panelConfig('accountDetails', 'Account Details', columns.accountDetails),
        rateLimits: deps.rateLimits,
        limits: [{ limitType: 'QUOTES_HISTORY_BARS', limit: deps.historyBarsLimit }],
      }),
  });

  add('GET', '/trade/accounts', {
    op: 'read',
    rateType: 'GET_ACCOUNTS',
    handler: ({ acct }) =>
      ok(
        deps.directory.accountsOf(acct.userKey).map((a) => ({
          id: String(a.accountId),
          name: a.sim.meta.name ?? a.sim.login,
          currency: a.sim.currency,
          accNum: String(a.accNum),
          tradingRules: { hedging: a.sim.hedging },
          riskRules: {},
        })),
      ),
  });

  add('GET', '/trade/accounts/:accountId/state', {
    op: 'read',
    rateType: 'GET_ACCOUNTS_STATE',
    handler: ({ acct }) => {
      const st = broker.state(acct.sim.id);
      const n = (d: Decimal) => d.toNumber();
      const values: Record<string, number> = {
        balance: n(st.balance),
        projectedBalance: n(st.equity),
        availableFunds: n(st.freeMargin),
        blockedBalance: 0,
        cashBalance: n(st.balance),
        unsettledCash: 0,
        withdrawalAvailable: n(Decimal.max(0, Decimal.min(st.balance, st.freeMargin))),
        stocksValue: 0,
        optionValue: 0,
        initialMarginReq: n(st.margin),
        maintMarginReq: n(st.margin),
        marginWarningLevel: 0,
        blockedForStocks: 0,
        stockOrdersReq: 0,
        stopOutLevel: 0,
        warningMarginReq: 0,
        marginBeforeWarning: n(st.freeMargin),
        todayGross: 0,
        todayNet: 0,
        todayFees: 0,
        todayVolume: 0,
        todayTradesCount: 0,
        openGrossPnL: n(st.unrealizedPnl),
        openNetPnL: n(st.unrealizedPnl),
        positionsCount: broker.positions(acct.sim.id).length,
        ordersCount: broker.orders(acct.sim.id).length,
      };
      return ok({ accountDetailsData: toRow(columns.accountDetails, values) });
    },
  });

  add('GET', '/trade/accounts/:accountId/positions', {
    op: 'read',
    rateType: 'GET_POSITIONS',
    handler: ({ acct }) =>
      ok({ positions: broker.positions(acct.sim.id).map((p) => positionRow(columns.positions, p, instOf(p.symbol))) }),
  });

  add('GET', '/trade/accounts/:accountId/orders', {
    op: 'read',
    rateType: 'GET_ORDERS',
    handler: ({ acct, query }) => {
      const from = msParam(query, 'from');
      const to = msParam(query, 'to');
      const symbol = symbolFilter(query);
      const pending = broker.orders(acct.sim.id, {
        ...(from && { from }),
        ...(to && { to }),
        ...(symbol && { symbol }),
      });
      const protective = broker
        .positions(acct.sim.id)
        .filter(
          (p) =>
            (!symbol || p.symbol === symbol) &&
            (!from || Date.parse(p.openedAt) >= +from) &&
            (!to || Date.parse(p.openedAt) <= +to),
        )
        .flatMap((p) => protectiveRows(columns.orders, p, instOf(p.symbol)));
      return ok({ orders: [...orderRows(columns.orders, acct.sim.id, pending), ...protective] });
    },
  });

  add('GET', '/trade/accounts/:accountId/ordersHistory', {
    op: 'read',
    rateType: 'GET_ORDERS_HISTORY',
    handler: ({ acct, query }) => {
      const from = msParam(query, 'from');
      const to = msParam(query, 'to');
      const symbol = symbolFilter(query);
      const all = broker
        .orders(acct.sim.id, {
          includeHistory: true,
          ...(from && { from }),
          ...(to && { to }),
          ...(symbol && { symbol }),
        })
        .filter((o) => o.status !== 'pending')
        .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.id < b.id ? -1 : 1));
      const page = all.slice(0, deps.historyPageSize);
      return ok({
        ordersHistory: orderRows(columns.ordersHistory, acct.sim.id, page),
        hasMore: all.length > page.length,
      });
    },
  });

  add('GET', '/trade/accounts/:accountId/executions', {
    op: 'read',
    rateType: 'GET_EXECUTIONS',
    handler: ({ acct }) =>
      ok({ executions: broker.deals(acct.sim.id).map((d) => fillRow(columns.filledOrders, d, instOf(d.symbol))) }),
  });

  add('GET', '/trade/accounts/:accountId/instruments', {
    op: 'read',
    rateType: 'GET_INSTRUMENTS',
    handler: () => ok({ instruments: broker.instruments().map(instrumentListItem) }),
  });

  add('GET', '/trade/instruments/:tradableInstrumentId', {
    op: 'read',
    rateType: 'GET_INSTRUMENT_DETAILS',
    handler: ({ params, query }) => {
      const inst = instById(params[0]);
      if (Number(query.get('routeId')) !== infoRouteId(inst))
        throw new HttpError(400, 'routeId must be the instrument INFO route');
      return ok(instrumentDetails(inst));
    },
  });

  add('GET', '/trade/quotes', {
    op: 'read',
    rateType: 'QUOTES',
    handler: ({ query }) => {
      const q = broker.quote(infoInstrument(query).symbol);
      return ok({ ap: q.ask.toNumber(), bp: q.bid.toNumber(), as: 0, bs: 0 });
    },
  });

  add('GET', '/trade/dailyBar', {
    op: 'read',
    rateType: 'DAILY_BAR',
    handler: ({ query }) => {
      const inst = infoInstrument(query);
      const barType = query.get('barType') ?? 'BID';
      if (!['BID', 'ASK', 'TRADE'].includes(barType)) throw new HttpError(400, 'barType must be BID, ASK or TRADE');
      const now = Date.parse(broker.quote(inst.symbol).time);
      const [bar] = deps.prices.series(inst.symbol, '1D', bucketStart('1D', now), now, barType as BarSide);
      if (!bar) return { status: 200, body: { s: 'no_data' } };
      return ok({ o: bar.o, h: bar.h, l: bar.l, c: bar.c, v: bar.v });
    },
  });

  add('GET', '/trade/depth', {
    op: 'read',
    rateType: 'DEPTH',
    handler: ({ query }) => {
      const inst = infoInstrument(query);
      const q = broker.quote(inst.symbol);
      // One level a side: the simulated market has a quote, not a book; the size is what one order may take.
      const size = inst.maxVolume.toNumber();
      return ok({ asks: [[q.ask.toNumber(), size]], bids: [[q.bid.toNumber(), size]] });
    },
  });

  add('GET', '/trade/history', {
    op: 'read',
    rateType: 'QUOTES_HISTORY',
    handler: ({ query }) => {
      const inst = infoInstrument(query);
      const resolution = query.get('resolution') ?? '';
      if (!RESOLUTIONS.includes(resolution))
        throw new HttpError(400, `resolution must be one of ${RESOLUTIONS.join(', ')}`);
      const from = msParam(query, 'from');
      const to = msParam(query, 'to');
      if (!from || !to || +from > +to) throw new HttpError(400, 'from and to (ms) are required, from <= to');
      if (bucketCount(resolution, +from, +to) > deps.historyBarsLimit) {
        throw new HttpError(
          400,
          `the range holds more than ${deps.historyBarsLimit} bars (limits.QUOTES_HISTORY_BARS)`,
        );
      }
      const bars = deps.prices.series(inst.symbol, resolution, +from, +to, 'BID');
      if (bars.length === 0) return { status: 200, body: { s: 'no_data' } };
      return ok({ barDetails: bars });
    },
  });

  add('GET', '/trade/sessions/:sessionId', {
    op: 'read',
    rateType: 'GET_TRADE_SESSIONS',
    handler: ({ params }) => {
      if (params[0] !== String(SESSION_ID)) throw new HttpError(404, `no trade session ${params[0]}`);
      return ok(sessionDetails());
    },
  });

  add('GET', '/trade/sessionStatuses/:sessionStatusId', {
    op: 'read',
    rateType: 'GET_SESSION_STATUSES',
    handler: ({ params }) => {
      if (params[0] !== String(SESSION_STATUS_ID)) throw new HttpError(404, `no session status ${params[0]}`);
      return ok(sessionStatus());
    },
  });

  add('POST', '/trade/accounts/:accountId/orders', {
    op: 'placeOrder',
    rateType: 'PLACE_ORDER',
    handler: ({ acct, body, partialRatio, refuseAs }) => {
      const inst = instById(body.tradableInstrumentId);
      const side = body.side as Side;
      const type = body.type as OrderType;
      if (side !== 'buy' && side !== 'sell') throw new HttpError(400, 'side must be buy or sell');
      if (!['market', 'limit', 'stop'].includes(type)) throw new HttpError(400, 'type must be market, limit or stop');
      const wantValidity = type === 'market' ? 'IOC' : 'GTC';
      if (body.validity !== wantValidity)
        throw new HttpError(400, `validity (TimeInForce) must be ${wantValidity} for ${type} orders`);
      if (Number(body.routeId) !== tradeRouteId(inst))
        throw new HttpError(400, 'routeId must be the instrument TRADE route');
      const qty = num(body.qty);
      if (qty === null) throw new HttpError(400, 'qty is required');
      const price = type === 'limit' ? num(body.price) : type === 'stop' ? num(body.stopPrice) : null;
      if (type !== 'market' && (price === null || price.lte(0)))
        throw new HttpError(400, `${type === 'limit' ? 'price' : 'stopPrice'} is required`);
      const strategyId = body.strategyId === undefined || body.strategyId === null ? '' : String(body.strategyId);
      if (strategyId.length > STRATEGY_ID_MAX)
        throw new HttpError(400, `strategyId must be at most ${STRATEGY_ID_MAX} characters`);
      // Offsets count from where the order executes: the market now, or its own price when it rests.
      const fillsNow =
        type === 'market' ||
        (type === 'limit' &&
          (side === 'buy' ? price!.gte(marketSide(inst, side)) : price!.lte(marketSide(inst, side))));
      const ref = () => (fillsNow ? marketSide(inst, side) : price!);
      const stopLoss = level(inst, side, ref, {
        kind: 'stopLoss',
        value: num(body.stopLoss),
        type: body.stopLossType,
        trailing: num(body.trStopOffset),
      });
      const takeProfit = level(inst, side, ref, {
        kind: 'takeProfit',
        value: num(body.takeProfit),
        type: body.takeProfitType,
      });
      const res = broker.placeOrder(
        acct.sim.id,
        { symbol: inst.symbol, side, type, volume: qty, price, stopLoss, takeProfit, tag: strategyId },
        {
          marketableLimit: 'fill',
          ...(partialRatio === undefined ? {} : { partialRatio }),
          ...(refuseAs ? { refuseAs } : {}),
        },
      );
      return ok({ orderId: res.order.id });
    },
  });

  add('DELETE', '/trade/accounts/:accountId/orders', {
    op: 'cancelOrder',
    rateType: 'MODIFY_ORDER',
    handler: ({ acct, query }) => {
      const symbol = symbolFilter(query);
      for (const o of broker.orders(acct.sim.id, symbol ? { symbol } : {})) broker.cancelOrder(acct.sim.id, o.id);
      return ok();
    },
  });

  add('DELETE', '/trade/accounts/:accountId/positions', {
    op: 'closePosition',
    rateType: 'MODIFY_POSITION',
    handler: ({ acct, query }) => {
      const symbol = symbolFilter(query);
      const strategyId = query.get('strategyId');
      for (const p of broker.positions(acct.sim.id)) {
        if (symbol && p.symbol !== symbol) continue;
        if (strategyId && p.tag !== strategyId) continue;
        broker.closePosition(acct.sim.id, p.id);
      }
      return ok();
    },
  });

  add('PATCH', '/trade/orders/:orderId', {
    op: 'modifyOrder',
    rateType: 'MODIFY_ORDER',
    handler: ({ acct, params, body }) => {
      const id = params[0]!;
      const prot = findProtective(broker, acct.sim.id, id);
      if (prot) {
        const p = prot.position;
        const level = prot.kind === 'sl' ? num(body.stopPrice) : num(body.price);
        if (level === null)
          throw new HttpError(400, prot.kind === 'sl' ? 'stopPrice is required' : 'price is required');
        const moved = broker.modifyPosition(acct.sim.id, p.id, {
          stopLoss: prot.kind === 'sl' ? level : p.stopLoss,
          takeProfit: prot.kind === 'tp' ? level : p.takeProfit,
        });
        return ok({ orders: protectiveRows(columns.orders, moved, instOf(moved.symbol)) });
      }
      const current = broker.orders(acct.sim.id).find((o) => o.id === id);
      if (!current) throw new HttpError(404, 'order not found');
      const change: Parameters<SimBrokerApi['modifyOrder']>[2] = {};
      const price = current.type === 'stop' ? num(body.stopPrice) : num(body.price);
      const qty = num(body.qty);
      if (price) change.price = price;
      if (qty) change.volume = qty;
      const inst = instOf(current.symbol);
      const ref = () => price ?? current.price!;
      // Only a level sent without its type keeps the old absolute meaning (null removes it).
      const typed = (kind: 'stopLoss' | 'takeProfit') =>
        body[`${kind}Type`] ?? (num(body[kind]) === null ? undefined : 'absolute');
      if ('stopLoss' in body || 'trStopOffset' in body) {
        change.stopLoss = level(inst, current.side, ref, {
          kind: 'stopLoss',
          value: num(body.stopLoss),
          type: typed('stopLoss'),
          trailing: num(body.trStopOffset),
        });
      }
      if ('takeProfit' in body)
        change.takeProfit = level(inst, current.side, ref, {
          kind: 'takeProfit',
          value: num(body.takeProfit),
          type: typed('takeProfit'),
        });
      const o = broker.modifyOrder(acct.sim.id, id, change);
      return ok({ orders: orderRows(columns.orders, acct.sim.id, [o]) });
    },
  });

  add('DELETE', '/trade/orders/:orderId', {
    op: 'cancelOrder',
    rateType: 'MODIFY_ORDER',
    handler: ({ acct, params }) => {
      const id = params[0]!;
      const prot = findProtective(broker, acct.sim.id, id);
      if (prot) {
        const p = prot.position;
        broker.modifyPosition(acct.sim.id, p.id, {
          stopLoss: prot.kind === 'sl' ? null : p.stopLoss,
          takeProfit: prot.kind === 'tp' ? null : p.takeProfit,
        });
        return ok();
      }
      // An order that is no longer pending (it filled, or was cancelled, first) is refused inside a 2xx, as the
      // official client's test suite expects of the real server (a filled order's delete: no HTTP error, s != "ok");
      // only an id the account never had is a 404.
      const final = broker.order(acct.sim.id, id);
      if (final && final.status !== 'pending')
        return { status: 200, body: { s: 'error', errmsg: `Order ${id} is ${WIRE_STATUS[final.status]}` } };
      broker.cancelOrder(acct.sim.id, id);
      return ok();
    },
  });

  add('PATCH', '/trade/positions/:positionId', {
    op: 'modifyPosition',
    rateType: 'MODIFY_POSITION',
    handler: ({ acct, params, body }) => {
      const p = broker.positions(acct.sim.id).find((x) => x.id === params[0]);
      if (!p) throw new HttpError(404, 'position not found');
      // Absent means unchanged and null removes, as the docs describe; the simulator wants both explicitly.
      // trailingOffset (pips) sets a stop that distance from the current close price; it does not trail.
      const inst = instOf(p.symbol);
      const trailing = num(body.trailingOffset);
      const stopLoss = trailing
        ? level(inst, p.side, () => p.currentPrice ?? marketSide(inst, p.side === 'buy' ? 'sell' : 'buy'), {
            kind: 'stopLoss',
            value: null,
            type: 'trailingOffset',
            trailing,
          })
        : 'stopLoss' in body
          ? num(body.stopLoss)
          : p.stopLoss;
      broker.modifyPosition(acct.sim.id, p.id, {
        stopLoss,
        takeProfit: 'takeProfit' in body ? num(body.takeProfit) : p.takeProfit,
      });
      return ok();
    },
  });

  add('DELETE', '/trade/positions/:positionId', {
    op: 'closePosition',
    rateType: 'MODIFY_POSITION',
    handler: ({ acct, params, body }) => {
      const qty = num(body.qty);
      if (qty?.lt(0)) throw new HttpError(400, 'qty must not be negative');
      broker.closePosition(acct.sim.id, params[0]!, qty === null || qty.isZero() ? undefined : qty);
      return ok();
    },
  });

  return routes;
}
