import { Decimal } from '../../domain/decimal.js';
import type { Position } from '../../domain/types.js';
import type { FaultOp, SimAccount, SimBrokerApi, SimInstrument } from '../contract.js';
import {
  instrumentDetailsJson,
  instrumentJson,
  lots,
  numericId,
  orderJson,
  positionJson,
  protectionJson,
} from './wire.js';
import { DxGuards } from './guards.js';

/** Thrown by handlers; the server answers the spec's `{errorCode, description}` with this status. */
export class DxHttpError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Reply {
  status: number;
  body?: unknown;
}

export interface DxAcct {
  sim: SimAccount;
  code: string;
}

export interface RouteCtx {
  acct: DxAcct;
  params: string[];
  query: URLSearchParams;
  body: Record<string, unknown>;
  ifMatch: string | null;
  partialRatio?: number;
  refuseAs?: 'cancelled' | 'rejected';
}

const incorrect = (what: string) => new DxHttpError(400, '33', `Incorrect request (${what})`);

function num(v: unknown, what: string): Decimal | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'number' && typeof v !== 'string') throw incorrect(`${what} is not a number`);
  const d = new Decimal(v);
  if (!d.isFinite()) throw incorrect(`${what} is not a number`);
  return d;
}
const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : null);
const sideOf = (v: unknown) => {
  const s = typeof v === 'string' ? v.toUpperCase() : '';
  if (s !== 'BUY' && s !== 'SELL') throw incorrect('side must be BUY or SELL');
  return s === 'BUY' ? ('buy' as const) : ('sell' as const);
};
const timeParam = (q: URLSearchParams, name: string): number | null => {
  const v = q.get(name);
  if (v === null || v === '') return null;
  const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(t)) throw new DxHttpError(400, '32', `Incorrect request parameters (${name})`);
  return t;
};

/**
 * The DX REST resources over the simulated book. SL and TP are the position's levels in the simulator; here they
 * show as position-attached protection orders whose orderCode the client chose (kept per position).
 */
export class DxRoutes {
  private readonly guards: DxGuards;
  private readonly usedCodes = new Map<string, Set<string>>();

  constructor(private readonly broker: SimBrokerApi) {
    this.guards = new DxGuards(broker);
  }

  /** Which fault op a request is: a close or a protection order is not a placeOrder. */
  opOf(method: string, path: string, body: Record<string, unknown>, acct: DxAcct): Exclude<FaultOp, '*'> {
    if (!/\/orders(\/|$)/.test(path) || method === 'GET') return 'read';
    if (method === 'POST') {
      if (Array.isArray(body.orders)) return 'placeOrder';
      if (String(body.positionEffect ?? '').toUpperCase() !== 'CLOSE')
        return this.nets(acct, body) ? 'closePosition' : 'placeOrder';
      return String(body.type ?? '').toUpperCase() === 'MARKET' ? 'closePosition' : 'modifyPosition';
    }
    const code = method === 'PUT' ? str(body.orderCode) : decodeURIComponent(path.split('/').pop() ?? '');
    if (code && this.guards.of(acct.sim.id, code)) return 'modifyPosition';
    return method === 'PUT' ? 'modifyOrder' : 'cancelOrder';
  }

  /** A netting account's order against its net position is that account's way to close. */
  private nets(acct: DxAcct, body: Record<string, unknown>): boolean {
    if (acct.sim.hedging || typeof body.side !== 'string') return false;
    const side = body.side.toUpperCase() === 'BUY' ? 'buy' : 'sell';
    return this.broker.positions(acct.sim.id).some((p) => p.symbol === body.instrument && p.side !== side);
  }

  inst(symbol: string): SimInstrument {
    const inst = this.broker.instrument(symbol);
    if (!inst) throw incorrect(`unknown instrument ${symbol}`);
    return inst;
  }

  instruments(symbol?: string): Reply {
    const all = this.broker.instruments().filter((i) => symbol === undefined || i.symbol === symbol);
    return { status: 200, body: { instruments: all.map(instrumentJson) } };
  }

  instrumentDetails(ctx: RouteCtx): Reply {
    const inst = this.broker.instrument(ctx.params[1]!);
    return { status: 200, body: { instruments: inst ? [instrumentDetailsJson(ctx.acct.code, inst)] : [] } };
  }

  metrics({ acct }: RouteCtx): Reply {
    const st = this.broker.state(acct.sim.id);
    const m = { account: acct.code, version: Date.now(), equity: st.equity.toFixed(), balance: st.balance.toFixed() };
    return { status: 200, body: { metrics: [{ ...m, availableFunds: st.freeMargin.toFixed() }] } };
  }

  positions({ acct }: RouteCtx): Reply {
    const list = this.broker.positions(acct.sim.id).map((p) => positionJson(acct.code, this.inst(p.symbol), p));
    return { status: 200, body: { positions: list } };
  }

  working({ acct }: RouteCtx): Reply {
    const orders = this.broker.orders(acct.sim.id).map((o) => orderJson(this.broker, acct.sim.id, acct.code, o));
    for (const p of this.broker.positions(acct.sim.id))
      for (const kind of ['sl', 'tp'] as const) {
        if ((kind === 'sl' ? p.stopLoss : p.takeProfit) === null) continue;
        const g = this.guards.guard(p.id, kind);
        orders.push(protectionJson(acct.code, this.inst(p.symbol), p, kind, g.code, g.version));
      }
    return { status: 200, body: { orders } };
  }

  history({ acct, query }: RouteCtx): Reply {
    const from = timeParam(query, 'issued-from');
    const to = timeParam(query, 'issued-to');
    const txFrom = timeParam(query, 'transaction-from');
    const rows = this.broker
      .orders(acct.sim.id, { includeHistory: true })
      .filter((o) => {
        const issued = Date.parse(o.createdAt);
        if (from !== null && issued < from) return false;
        if (to !== null && issued > to) return false;
        return txFrom === null || Date.parse(o.updatedAt) >= txFrom;
      })
      .map((o) => orderJson(this.broker, acct.sim.id, acct.code, o));
    return { status: 200, body: { orders: rows } };
  }

  place(ctx: RouteCtx): Reply {
    const { body, acct } = ctx;
    if (Array.isArray(body.orders)) return this.placeGroup(ctx);
    const code = this.claim(acct, body.orderCode);
    const effect = String(body.positionEffect ?? '').toUpperCase();
    if (effect === 'CLOSE') {
      const pos = this.position(acct, str(body.positionCode));
      const type = String(body.type ?? '').toUpperCase();
      if (type === 'MARKET') {
        const inst = this.inst(pos.symbol);
        const q = num(body.quantity, 'quantity');
        const r = this.broker.closePosition(acct.sim.id, pos.id, q ? lots(inst, q) : undefined);
        return { status: 200, body: { orderId: numericId(r.order.id), updateOrderId: numericId(r.order.id) } };
      }
      const kind = type === 'STOP' ? 'sl' : type === 'LIMIT' ? 'tp' : null;
      if (!kind) throw incorrect('a protection order is STOP or LIMIT');
      this.guards.set(acct.sim.id, pos, kind, this.level(body, kind), code);
      return { status: 200, body: { orderId: numericId(pos.id) * 10 + 1, updateOrderId: numericId(pos.id) * 10 + 1 } };
    }
    const r = this.open(ctx, body, code, {});
    return { status: 200, body: { orderId: numericId(r.order.id), updateOrderId: numericId(r.order.id) } };
  }

  modify(ctx: RouteCtx): Reply {
    const { body, acct } = ctx;
    const code = str(body.orderCode);
    if (!code) throw incorrect('orderCode is required');
    if ('type' in body) throw new DxHttpError(409, '34', 'Order type cannot be changed');
    const guard = this.guards.of(acct.sim.id, code);
    if (guard) {
      this.checkVersion(ctx, guard.guard.version);
      this.guards.set(acct.sim.id, guard.pos, guard.kind, this.level(body, guard.kind), code);
      return { status: 200, body: { orderId: numericId(guard.pos.id), updateOrderId: numericId(guard.pos.id) } };
    }
    const o = this.broker.order(acct.sim.id, code);
    if (!o || o.status !== 'pending') throw new DxHttpError(404, '2', 'Entity not found at server');
    this.checkVersion(ctx, Date.parse(o.updatedAt));
    const inst = this.inst(o.symbol);
    const price = num(o.type === 'stop' ? body.stopPrice : body.limitPrice, 'price');
    const q = num(body.quantity, 'quantity');
    const after = this.broker.modifyOrder(acct.sim.id, code, {
      ...(price ? { price } : {}),
      ...(q ? { volume: lots(inst, q) } : {}),
    });
    return { status: 200, body: { orderId: numericId(after.id), updateOrderId: numericId(after.id) } };
  }

  cancel(ctx: RouteCtx): Reply {
    const { acct } = ctx;
    const code = ctx.params[1]!;
    const guard = this.guards.of(acct.sim.id, code);
    if (guard) {
      this.checkVersion(ctx, guard.guard.version);
      this.guards.set(acct.sim.id, guard.pos, guard.kind, null, code);
      return { status: 200, body: { orderId: numericId(guard.pos.id), updateOrderId: numericId(guard.pos.id) } };
    }
    const o = this.broker.order(acct.sim.id, code);
    if (!o) throw new DxHttpError(404, '2', 'Entity not found at server');
    if (o.status !== 'pending') throw new DxHttpError(409, '35', `Order ${code} is in a final state`);
    this.checkVersion(ctx, Date.parse(o.updatedAt));
    const after = this.broker.cancelOrder(acct.sim.id, code);
    return { status: 200, body: { orderId: numericId(after.id), updateOrderId: numericId(after.id) } };
  }

  // ---- internals ----------------------------------------------------------------------------------

  private placeGroup(ctx: RouteCtx): Reply {
    const { body, acct } = ctx;
    if (String(body.contingencyType ?? '').toUpperCase() !== 'IF-THEN')
      throw incorrect('the simulator takes IF-THEN groups only');
    // The spec: "Order groups can be issued only for Position-based accounts".
    if (!acct.sim.hedging) throw new DxHttpError(409, '36', 'Order groups need a position-based account');
    const [first, ...then] = (body.orders as unknown[]).map((o) => (o && typeof o === 'object' ? o : {})) as Array<
      Record<string, unknown>
    >;
    if (!first || then.length === 0 || then.length > 2)
      throw incorrect('an IF-THEN group is one IF and one or two THEN');
    const code = this.claim(acct, first.orderCode);
    const levels: { stopLoss?: Decimal; takeProfit?: Decimal } = {};
    const codes: { sl?: string; tp?: string } = {};
    for (const t of then) {
      if (String(t.positionEffect ?? '').toUpperCase() !== 'CLOSE') throw incorrect('THEN orders have CLOSE effect');
      if (t.quantity !== undefined && num(t.quantity, 'quantity')?.gt(0))
        throw incorrect('THEN orders take no quantity');
      if (sideOf(t.side) === sideOf(first.side)) throw incorrect('THEN orders have the opposite side');
      const kind = String(t.type ?? '').toUpperCase() === 'STOP' ? 'sl' : 'tp';
      if (kind === 'sl') levels.stopLoss = this.level(t, 'sl');
      else levels.takeProfit = this.level(t, 'tp');
      codes[kind] = this.claim(acct, t.orderCode);
    }
    const r = this.open(ctx, first, code, levels);
    if (r.position)
      for (const k of ['sl', 'tp'] as const) if (codes[k]) this.guards.remember(r.position.id, k, codes[k]!);
    const id = numericId(r.order.id);
    return {
      status: 200,
      body: [{ orderId: id, updateOrderId: id }, ...then.map(() => ({ orderId: id, updateOrderId: id }))],
    };
  }

  private open(
    ctx: RouteCtx,
    o: Record<string, unknown>,
    tag: string,
    levels: { stopLoss?: Decimal; takeProfit?: Decimal },
  ) {
    const symbol = str(o.instrument);
    if (!symbol) throw incorrect('instrument is required');
    const inst = this.inst(symbol);
    const typeRaw = String(o.type ?? '').toUpperCase();
    const type = typeRaw === 'MARKET' ? 'market' : typeRaw === 'LIMIT' ? 'limit' : typeRaw === 'STOP' ? 'stop' : null;
    if (!type) throw incorrect('type must be MARKET, LIMIT or STOP');
    const q = num(o.quantity, 'quantity');
    if (!q || q.lte(0)) throw incorrect('quantity must be positive');
    const price =
      type === 'limit' ? num(o.limitPrice, 'limitPrice') : type === 'stop' ? num(o.stopPrice, 'stopPrice') : null;
    if (type !== 'market' && !price) throw incorrect(`a ${typeRaw} order needs its price`);
    return this.broker.placeOrder(
      ctx.acct.sim.id,
      { symbol, side: sideOf(o.side), type, volume: lots(inst, q), price, tag, ...levels },
      {
        marketableLimit: 'fill',
        ...(ctx.partialRatio !== undefined ? { partialRatio: ctx.partialRatio } : {}),
        ...(ctx.refuseAs ? { refuseAs: ctx.refuseAs } : {}),
      },
    );
  }

  /** A new orderCode: required, and unique on the account (the spec's 409, code 100). */
  private claim(acct: DxAcct, v: unknown): string {
    const code = str(v);
    if (!code) throw new DxHttpError(400, '101', 'Client-originated identifier is not valid');
    const used = this.usedCodes.get(acct.sim.id) ?? new Set<string>();
    this.usedCodes.set(acct.sim.id, used);
    const f = this.broker.findByTag(acct.sim.id, code);
    if (used.has(code) || f.order || f.position)
      throw new DxHttpError(409, '100', `Order with this id already exists (${code})`);
    used.add(code);
    return code;
  }

  private position(acct: DxAcct, code: string | null): Position {
    const pos = code ? this.broker.positionById(acct.sim.id, code) : null;
    if (!pos) throw new DxHttpError(404, '2', 'Entity not found at server');
    return pos;
  }

  private level(o: Record<string, unknown>, kind: 'sl' | 'tp'): Decimal {
    const v = num(kind === 'sl' ? o.stopPrice : o.limitPrice, kind === 'sl' ? 'stopPrice' : 'limitPrice');
    if (!v) throw incorrect(`${kind === 'sl' ? 'stopPrice' : 'limitPrice'} is required`);
    return v;
  }

  /** Conditional requests only: 403 (99) without If-Match, 412 when it names another version. */
  private checkVersion(ctx: RouteCtx, version: number): void {
    if (ctx.ifMatch === null) throw new DxHttpError(403, '99', 'Conditional request required');
    const want = ctx.ifMatch.replace(/^W\//, '').replace(/"/g, '');
    if (want !== '*' && want !== String(version)) throw new DxHttpError(412, '98', 'Precondition failed');
  }
}
