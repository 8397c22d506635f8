import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Decimal, dec } from '../../src/domain/decimal.js';
import { AppError } from '../../src/domain/errors.js';
import type { InstrumentSpec, Position, Side } from '../../src/domain/types.js';
import type { BrokerAdapter, OrderOutcome, PlaceOrderRequest } from '../../src/platforms/adapter.js';
import type { SimBrokerApi, SimInstrument } from '../../src/simulator/contract.js';
import { appError } from '../helpers/app-error.js';

/**
 * The one execution spec every platform adapter passes for the capabilities it declares. The adapter talks to
 * the simulator (in process or over its protocol front end); the suite checks each answer against the
 * simulator's own state, so a wrong parse or a lost field shows up as a mismatch here.
 */
export interface ConformanceHarness {
  broker: SimBrokerApi;
  simAccountId: string;
  adapter: BrokerAdapter;
  teardown(): Promise<void>;
}

const SYMBOL = 'EURUSD';
const MID = '1.08000';

export function runAdapterConformance(name: string, setup: () => Promise<ConformanceHarness>): void {
  describe(`adapter conformance: ${name}`, () => {
    let h: ConformanceHarness;
    let spec: InstrumentSpec;
    let sim: SimInstrument;
    let tagSeq = 0;

    beforeAll(async () => {
      h = await setup();
      h.broker.setPrice(SYMBOL, MID);
      sim = h.broker.instrument(SYMBOL)!;
      const s = await h.adapter.instrument(SYMBOL);
      if (!s) throw new Error(`${name}: adapter does not know ${SYMBOL}`);
      spec = s;
    }, 30_000);
    afterEach(() => h?.broker.faults.clear());
    afterAll(async () => {
      h?.broker.faults.clear();
      await h?.teardown();
    });

    const caps = () => h.adapter.capabilities;
    /** Short, alphanumeric and unique per run, so it fits every platform's tag field. */
    const newTag = () => `cf${Date.now().toString(36)}${(++tagSeq).toString(36)}`.slice(0, caps().correlationTag.maxLength);
    /** k minimum lots in the adapter's own volume unit. */
    const vol = (k: number): Decimal => spec.minVolume.mul(k);
    const toLots = (v: Decimal): Decimal => (caps().volumeUnit === 'units' ? v.div(sim.contractSize) : v);
    const ticks = (n: number): Decimal => sim.tickSize.mul(n);
    const quote = () => h.broker.quote(SYMBOL);
    const simPosition = (tag: string): Position | undefined => h.broker.positions(h.simAccountId).find((p) => p.tag === tag);
    const str = (d: Decimal | null | undefined) => (d === null || d === undefined ? null : dec(d).toString());

    function market(side: Side, tag: string, k = 1, withStops = true): PlaceOrderRequest {
      const q = quote();
      const s = side === 'buy' ? 1 : -1;
      const ref = side === 'buy' ? q.bid : q.ask;
      return {
        symbol: SYMBOL,
        side,
        type: 'market',
        volume: vol(k),
        stopLoss: withStops && caps().has.stopLossOnOpen ? ref.minus(ticks(300).mul(s)) : null,
        takeProfit: withStops && caps().has.takeProfitOnOpen ? ref.plus(ticks(300).mul(s)) : null,
        tag,
      };
    }

    async function open(side: Side, k = 1): Promise<{ tag: string; out: OrderOutcome; pos: Position }> {
      const tag = newTag();
      const out = await h.adapter.placeOrder(market(side, tag, k));
      expect(out, JSON.stringify(out)).toMatchObject({ kind: 'confirmed' });
      const pos = simPosition(tag);
      expect(pos, `simulator has no position tagged ${tag}`).toBeDefined();
      return { tag, out, pos: pos! };
    }

    async function adapterPosition(id: string): Promise<Position | undefined> {
      return (await h.adapter.listPositions()).find((p) => p.id === id);
    }


    it('account info matches the simulator', async () => {
      const info = await h.adapter.accountInfo();
      const st = h.broker.state(h.simAccountId);
      expect(str(info.balance)).toBe(str(st.balance));
      expect(str(info.equity)).toBe(str(st.equity));
      expect(info.currency).toBe(st.currency);
      expect(info.brokerAccountNumber).toMatch(/\S/);
    });

    it('instrument spec matches the simulator, unknown symbols give null', async () => {
      expect(spec.symbol).toBe(SYMBOL);
      expect(str(spec.tickSize)).toBe(str(sim.tickSize));
      expect(str(spec.contractSize)).toBe(str(sim.contractSize));
      expect(str(toLots(spec.minVolume))).toBe(str(sim.minVolume));
      expect(str(toLots(spec.maxVolume))).toBe(str(sim.maxVolume));
      expect(str(toLots(spec.volumeStep))).toBe(str(sim.volumeStep));
      expect(await h.adapter.instrument('NOSUCHSYMBOL')).toBeNull();
    });

    it('quotes the simulator\'s bid and ask where it declares quotes; an unknown symbol gives null', async (ctx) => {
      if (!caps().has.quotes) {
        expect(h.adapter.quote, `${name} has quote() but does not declare has.quotes`).toBeUndefined();
        return ctx.skip();
      }
      const q = await h.adapter.quote!(SYMBOL);
      expect({ bid: str(q?.bid), ask: str(q?.ask) }).toEqual({ bid: str(quote().bid), ask: str(quote().ask) });
      expect(await h.adapter.quote!('NOSUCHSYMBOL')).toBeNull();
    });

    for (const side of ['buy', 'sell'] as const) {
      it(`market ${side} with SL/TP is confirmed and visible through the adapter and the simulator`, async (ctx) => {
        if (!caps().has.marketOrders) ctx.skip('no market orders');
        const tag = newTag();
        const req = market(side, tag, 2);
        const out = await h.adapter.placeOrder(req);
        expect(out, JSON.stringify(out)).toMatchObject({ kind: 'confirmed' });
        const pos = simPosition(tag);
        expect(pos).toMatchObject({ symbol: SYMBOL, side, tag });
        expect(str(pos!.volume)).toBe(str(toLots(req.volume)));
        expect(str(pos!.stopLoss)).toBe(str(req.stopLoss));
        expect(str(pos!.takeProfit)).toBe(str(req.takeProfit));
        if (out.kind === 'confirmed' && out.positionId !== null) expect(out.positionId).toBe(pos!.id);

        const seen = await adapterPosition(pos!.id);
        expect(seen, 'adapter lists the position under the simulator id').toBeDefined();
        expect(seen).toMatchObject({ symbol: SYMBOL, side });
        expect(typeof seen!.id).toBe('string');
        expect(str(seen!.volume)).toBe(str(req.volume));
        expect(str(seen!.openPrice)).toBe(str(pos!.openPrice));
        expect(str(seen!.stopLoss)).toBe(str(req.stopLoss));
        expect(str(seen!.takeProfit)).toBe(str(req.takeProfit));
        if (caps().has.lookupByTag === true) expect(seen!.tag).toBe(tag);
      });
    }

    it('modifies SL/TP of a position', async (ctx) => {
      if (!caps().has.modifyPositionSlTp) ctx.skip('cannot modify SL/TP');
      const { pos } = await open('buy');
      const q = quote();
      const change = { stopLoss: q.bid.minus(ticks(500)), takeProfit: q.bid.plus(ticks(500)) };
      expect(await h.adapter.modifyPosition(pos.id, change)).toMatchObject({ kind: 'confirmed' });
      const after = h.broker.positions(h.simAccountId).find((p) => p.id === pos.id)!;
      expect(str(after.stopLoss)).toBe(str(change.stopLoss));
      expect(str(after.takeProfit)).toBe(str(change.takeProfit));
      const seen = await adapterPosition(pos.id);
      expect(str(seen?.stopLoss)).toBe(str(change.stopLoss));
      expect(str(seen?.takeProfit)).toBe(str(change.takeProfit));
    });

    it('partially closes a position, keeping its id', async (ctx) => {
      if (!caps().has.partialClose) ctx.skip('no partial close');
      const { pos } = await open('sell', 3);
      expect(await h.adapter.closePosition(pos.id, vol(1))).toMatchObject({ kind: 'confirmed' });
      const after = h.broker.positions(h.simAccountId).find((p) => p.id === pos.id);
      expect(str(after?.volume)).toBe(str(toLots(vol(2))));
      expect(str((await adapterPosition(pos.id))?.volume)).toBe(str(vol(2)));
    });

    it('fully closes a position', async () => {
      const { pos } = await open('buy');
      expect(await h.adapter.closePosition(pos.id)).toMatchObject({ kind: 'confirmed' });
      expect(h.broker.positions(h.simAccountId).some((p) => p.id === pos.id)).toBe(false);
      expect(await adapterPosition(pos.id)).toBeUndefined();
    });

    async function placeLimit(tag: string) {
      const price = quote().bid.minus(ticks(1000));
      const out = await h.adapter.placeOrder({ symbol: SYMBOL, side: 'buy', type: 'limit', volume: vol(1), price, tag });
      expect(out, JSON.stringify(out)).toMatchObject({ kind: 'confirmed' });
      const simOrder = h.broker.orders(h.simAccountId).find((o) => o.tag === tag);
      expect(simOrder).toMatchObject({ type: 'limit', side: 'buy', status: 'pending' });
      expect(str(simOrder!.price)).toBe(str(price));
      if (out.kind === 'confirmed' && out.brokerOrderId !== null) expect(out.brokerOrderId).toBe(simOrder!.id);
      return simOrder!;
    }

    it('places and cancels a pending limit order', async (ctx) => {
      if (!caps().has.pendingOrders || !caps().has.cancelPendingOrder) ctx.skip('no pending orders');
      const order = await placeLimit(newTag());
      expect((await h.adapter.listOrders()).some((o) => o.id === order.id)).toBe(true);
      expect(await h.adapter.cancelOrder(order.id)).toMatchObject({ kind: 'confirmed' });
      expect(h.broker.orders(h.simAccountId).some((o) => o.id === order.id)).toBe(false);
      expect((await h.adapter.listOrders()).some((o) => o.id === order.id)).toBe(false);
    });

    it('modifies a pending limit order', async (ctx) => {
      if (!caps().has.pendingOrders || !caps().has.modifyPendingOrder || !h.adapter.modifyOrder) ctx.skip('cannot modify pending orders');
      const order = await placeLimit(newTag());
      const price = order.price!.minus(ticks(200));
      expect(await h.adapter.modifyOrder!(order.id, { price })).toMatchObject({ kind: 'confirmed' });
      expect(str(h.broker.orders(h.simAccountId).find((o) => o.id === order.id)?.price)).toBe(str(price));
      expect(str((await h.adapter.listOrders()).find((o) => o.id === order.id)?.price)).toBe(str(price));
    });

    it('queries order history by time window', async (ctx) => {
      if (!caps().has.orderHistory) ctx.skip('no order history');
      const tag = newTag();
      const before = Date.now();
      if (caps().has.pendingOrders && caps().has.cancelPendingOrder) {
        const order = await placeLimit(tag);
        await h.adapter.cancelOrder(order.id);
      } else {
        expect(await h.adapter.placeOrder(market('buy', tag))).toMatchObject({ kind: 'confirmed' });
      }
      const hit = h.broker.orders(h.simAccountId, { includeHistory: true }).find((o) => o.tag === tag);
      expect(hit, 'simulator recorded the order').toBeDefined();
      const inWindow = await h.adapter.listOrders({ includeHistory: true, from: new Date(before - 60_000), to: new Date(Date.now() + 60_000) });
      expect(inWindow.some((o) => o.id === hit!.id)).toBe(true);
      const earlier = await h.adapter.listOrders({ includeHistory: true, from: new Date(before - 7_200_000), to: new Date(before - 3_600_000) });
      expect(earlier.some((o) => o.id === hit!.id)).toBe(false);
    });

    it('finds a position by tag, and reports an unknown tag as not found', async (ctx) => {
      if (!caps().has.lookupByTag) ctx.skip('no lookup by tag');
      const { tag, pos } = await open('buy');
      const found = await h.adapter.findByTag(tag);
      expect(found.found).toBe(true);
      expect(found.position?.id).toBe(pos.id);
      expect(await h.adapter.findByTag(`${newTag()}x`.slice(0, caps().correlationTag.maxLength))).toMatchObject({ found: false });
    });

    it('an invalid volume is refused and opens nothing', async () => {
      const tag = newTag();
      const before = h.broker.positions(h.simAccountId).length;
      const out = await h.adapter.placeOrder({ ...market('buy', tag, 1, false), volume: vol(1).plus(spec.volumeStep.div(2)) });
      // Adapters that validate before sending answer denied; both mean nothing reached the book.
      expect(['rejected', 'denied']).toContain(out.kind);
      expect(h.broker.positions(h.simAccountId)).toHaveLength(before);
      expect(h.broker.findByTag(h.simAccountId, tag)).toEqual({});
    });

    it('a market order the broker takes and then cancels or rejects after the timeout: unresolved, and the tag shows it refused with no position', async () => {
      for (const refuseAs of ['cancelled', 'rejected'] as const) {
        const tag = newTag();
        h.broker.faults.inject({ op: 'placeOrder', kind: 'cancel_after_timeout', refuseAs, accountId: h.simAccountId });
        expect(await h.adapter.placeOrder(market('buy', tag, 1, false))).toMatchObject({ kind: 'unresolved' });
        const found = await h.adapter.findByTag(tag);
        expect(found).toMatchObject({ found: true, order: { status: refuseAs, type: 'market' } });
        expect(found.position).toBeUndefined();
        expect(simPosition(tag)).toBeUndefined();
      }
    });

    it('a broker rejection is rejected and opens nothing', async () => {
      const tag = newTag();
      h.broker.faults.inject({ op: 'placeOrder', kind: 'reject', accountId: h.simAccountId });
      const out = await h.adapter.placeOrder(market('buy', tag));
      expect(out.kind).toBe('rejected');
      expect(simPosition(tag)).toBeUndefined();
    });

    it('a timeout after the broker applied the order is unresolved, and the tag settles it', async () => {
      const tag = newTag();
      h.broker.faults.inject({ op: 'placeOrder', kind: 'timeout_after_apply', accountId: h.simAccountId });
      const out = await h.adapter.placeOrder(market('buy', tag));
      expect(out.kind).toBe('unresolved');
      expect(h.broker.positions(h.simAccountId).filter((p) => p.tag === tag)).toHaveLength(1);
      if (caps().has.lookupByTag) {
        const found = await h.adapter.findByTag(tag);
        expect(found.found).toBe(true);
        expect(found.position?.id).toBe(simPosition(tag)!.id);
      }
    });

    it('a rate-limited read throws rate_limited with retryAfter', async () => {
      h.broker.faults.inject({ op: 'read', kind: 'rate_limit', retryAfterSec: 3, accountId: h.simAccountId });
      const err = await appError(h.adapter.listPositions());
      expect(err.code).toBe('rate_limited');
      expect(err.retryAfter).toBeGreaterThan(0);
    });
  });
}
