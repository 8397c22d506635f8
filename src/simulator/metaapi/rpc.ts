import type { Order } from '../../domain/types.js';
import type { SimBrokerApi } from '../contract.js';
import { ApiError } from './http.js';
import { type AccountRegistry, mtPlatformOf } from './registry.js';
import { runTrade } from './trade.js';
import {
  accountInformationDto,
  type CommentStore,
  dealDto,
  fillPrices,
  orderDto,
  positionDto,
  specificationDto,
} from './wire.js';

/**
 * The streaming host's RPC requests, as the official SDK sends them over the socket (metaapi.cloud-sdk 29.x,
 * lib/clients/metaApi/metaApiWebsocket.client.ts: `{type, application: 'RPC', ...}` answered by a `response`
 * whose field carries the result: accountInformation, positions, position, orders, order, historyOrders, deals,
 * specification, symbols, price; `trade` answers `response: <MetatraderTradeResponse>`). The same terminal
 * state as the REST client API, the same DTOs.
 */

export interface TerminalDeps {
  broker: SimBrokerApi;
  registry: AccountRegistry;
  comments: CommentStore;
}

export function terminalDtos(deps: TerminalDeps) {
  const { broker, registry, comments } = deps;
  const dtoCtx = (simId: string) => {
    const sim = broker.account(simId)!;
    const acc = registry.list().find((a) => a.simId === simId);
    return { platform: mtPlatformOf(sim), magic: acc?.magic ?? 0, comments };
  };
  const orderDtos = (simId: string, list: Order[]) => {
    const ctx = dtoCtx(simId);
    const prices = fillPrices(list.flatMap((o) => broker.dealsOf(simId, { orderId: o.id })));
    return list.map((o) =>
      orderDto(o, {
        ...ctx,
        fillPrice: prices.get(o.id) ?? null,
        currentPrice:
          o.status === 'pending' ? (o.side === 'buy' ? broker.quote(o.symbol).ask : broker.quote(o.symbol).bid) : null,
      }),
    );
  };
  return { dtoCtx, orderDtos };
}

const time = (v: unknown, name: string) => {
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(t)) throw new ApiError(400, `${name} must be an ISO-8601 time`);
  return t;
};

/** The answer fields of one RPC request for a connected account; null for a type the simulator does not serve. */
export function rpcAnswer(
  deps: TerminalDeps,
  accountId: string,
  req: Record<string, unknown>,
): Record<string, unknown> | null {
  const { broker, registry, comments } = deps;
  const { dtoCtx, orderDtos } = terminalDtos(deps);
  const { acc, sim } = registry.connected(accountId);
  const simId = sim.id;
  const ctx = dtoCtx(simId);
  const history = () => broker.orders(simId, { includeHistory: true }).filter((o) => o.status !== 'pending');
  const range = <T>(rows: T[], at: (r: T) => string) => {
    const from = time(req.startTime, 'startTime');
    const to = time(req.endTime, 'endTime');
    const offset = typeof req.offset === 'number' ? req.offset : 0;
    const limit = typeof req.limit === 'number' ? req.limit : 1000;
    return rows.filter((r) => Date.parse(at(r)) >= from && Date.parse(at(r)) < to).slice(offset, offset + limit);
  };
  switch (req.type) {
    // Nothing to wait for: the simulated terminal is synchronized as soon as it is connected.
    case 'waitSynchronized':
      return {};
    case 'getAccountInformation':
      return { accountInformation: accountInformationDto(broker, sim) };
    case 'getPositions':
      return { positions: broker.positions(simId).map((p) => positionDto(p, acc.magic, comments)) };
    case 'getPosition': {
      const p = broker.positions(simId).find((x) => x.id === String(req.positionId));
      if (!p) throw new ApiError(404, `Position ${String(req.positionId)} not found`);
      return { position: positionDto(p, acc.magic, comments) };
    }
    case 'getOrders':
      return { orders: orderDtos(simId, broker.orders(simId)) };
    case 'getOrder': {
      const o = broker.orders(simId).find((x) => x.id === String(req.orderId));
      if (!o) throw new ApiError(404, `Order ${String(req.orderId)} not found`);
      return { order: orderDtos(simId, [o])[0] };
    }
    case 'getHistoryOrdersByTimeRange':
      return {
        historyOrders: orderDtos(
          simId,
          range(history(), (o) => o.createdAt),
        ),
        synchronizing: false,
      };
    case 'getDealsByTimeRange':
      return {
        deals: range(broker.deals(simId), (d) => d.time).map((d) => dealDto(d, ctx)),
        synchronizing: false,
      };
    case 'getSymbols':
      return { symbols: broker.instruments().map((i) => i.symbol) };
    case 'getSymbolSpecification': {
      const i = broker.instrument(String(req.symbol));
      if (!i) throw new ApiError(404, `Symbol ${String(req.symbol)} not found`);
      return { specification: specificationDto(i) };
    }
    case 'getSymbolPrice': {
      const q = broker.quote(String(req.symbol));
      return { price: { symbol: req.symbol, bid: Number(q.bid), ask: Number(q.ask), time: new Date().toISOString() } };
    }
    case 'trade': {
      const trade = (req.trade && typeof req.trade === 'object' ? req.trade : {}) as Record<string, unknown>;
      return { response: runTrade({ broker, simId, platform: mtPlatformOf(sim), comments }, trade) };
    }
    default:
      return null;
  }
}
