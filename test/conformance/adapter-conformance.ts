import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Decimal, dec } from '../../src/domain/decimal.js';
import type { InstrumentSpec, Position, Side } from '../../src/domain/types.js';
import type { BrokerAdapter, BrokerEvent, OrderOutcome, PlaceOrderRequest } from '../../src/platforms/adapter.js';
import type { SimBrokerApi, SimInstrument } from '../../src/simulator/contract.js';
import { appError } from '../helpers/app-error.js';
import { underWriteGate } from '../../src/domain/write-gate.js';

/**
 * The one execution spec every platform adapter passes. The adapter talks to the simulator (in process or
 * over its protocol front end); the suite checks each answer against the simulator's own state, so a wrong
 * parse or a lost field shows up as a mismatch here. What an adapter declares it cannot do is checked too:
 * the call is refused (`denied` `capability_missing`) and nothing reaches the broker; sim.test.ts runs the
 * suite once on an adapter that lacks every optional write. The faults every platform shares (timeouts
 * before and after the write applied, resets, 429, partial fills, late answers) and subscribe()'s events are
 * here too; what only one protocol has (token refresh, served rate limits, HTTP 200 errors) stays in
 * test/faults/<platform>-faults.test.ts. A netting account runs the same suite: each case starts flat.
 */
export interface ConformanceHarness {
  broker: SimBrokerApi;
  simAccountId: string;
  adapter: BrokerAdapter;
  /** The adapter's write timeout: a late answer past it is unresolved. */
  timeoutMs: number;
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
    afterEach(() => {
      h?.broker.faults.clear();
      // Each case starts flat, so on a netting account an open is a new position there too.
      for (const p of h?.broker.positions(h.simAccountId) ?? []) h.broker.closePosition(h.simAccountId, p.id);
      for (const o of h?.broker.orders(h.simAccountId) ?? []) h.broker.cancelOrder(h.simAccountId, o.id);
    });
    afterAll(async () => {
      h?.broker.faults.clear();
      await h?.teardown();
    });

    const caps = () => h.adapter.capabilities;
    /** Short, alphanumeric and unique per run, so it fits every platform's tag field. */
    const newTag = () =>
      `cf${Date.now().toString(36)}${(++tagSeq).toString(36)}`.slice(0, caps().correlationTag.maxLength);
    /** k minimum lots in the adapter's own volume unit. */
    const vol = (k: number): Decimal => spec.minVolume.mul(k);
    const toLots = (v: Decimal): Decimal => (caps().volumeUnit === 'units' ? v.div(sim.contractSize) : v);
    const ticks = (n: number): Decimal => sim.tickSize.mul(n);
    const quote = () => h.broker.quote(SYMBOL);
    const simPosition = (tag: string): Position | undefined =>
      h.broker.positions(h.simAccountId).find((p) => p.tag === tag);
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

    /** A call the adapter declares it cannot make is refused before the broker: nothing changes there. */
    async function refused(call: () => Promise<OrderOutcome>, flag: string) {
      const positions = JSON.stringify(h.broker.positions(h.simAccountId));
      const orders = JSON.stringify(h.broker.orders(h.simAccountId, { includeHistory: true }));
      const out = await call();
      expect(out).toMatchObject({ kind: 'denied', code: 'capability_missing', message: expect.stringContaining(flag) });
      expect(JSON.stringify(h.broker.positions(h.simAccountId))).toBe(positions);
      expect(JSON.stringify(h.broker.orders(h.simAccountId, { includeHistory: true }))).toBe(orders);
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

    it("lists the simulator's symbols where the platform has a symbol list (the connection test counts them)", async () => {
      if (!h.adapter.listSymbols) {
        expect(name, 'only the terminal bridge (and the stripped sim) has no symbol list').toMatch(/bridge|lacking/);
        return;
      }
      const listed = await h.adapter.listSymbols();
      expect([...listed].sort()).toEqual(
        h.broker
          .instruments()
          .map((i) => i.symbol)
          .sort(),
      );
    });

    it("quotes the simulator's bid and ask where it declares quotes; an unknown symbol gives null", async () => {
      if (!caps().has.quotes) {
        expect(h.adapter.quote, `${name} has quote() but does not declare has.quotes`).toBeUndefined();
        return;
      }
      const q = await h.adapter.quote!(SYMBOL);
      expect({ bid: str(q?.bid), ask: str(q?.ask) }).toEqual({ bid: str(quote().bid), ask: str(quote().ask) });
      expect(await h.adapter.quote!('NOSUCHSYMBOL')).toBeNull();
    });

    for (const side of ['buy', 'sell'] as const) {
      it(`market ${side} with SL/TP is confirmed and visible through the adapter and the simulator`, async () => {
        const tag = newTag();
        if (!caps().has.marketOrders) return refused(() => h.adapter.placeOrder(market(side, tag, 2)), 'marketOrders');
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

    it('modifies SL/TP of a position', async () => {
      const { pos } = await open('buy');
      const q = quote();
      const change = { stopLoss: q.bid.minus(ticks(500)), takeProfit: q.bid.plus(ticks(500)) };
      if (!caps().has.modifyPositionSlTp)
        return refused(() => h.adapter.modifyPosition(pos.id, change), 'modifyPositionSlTp');
      expect(await h.adapter.modifyPosition(pos.id, change)).toMatchObject({ kind: 'confirmed' });
      const after = h.broker.positions(h.simAccountId).find((p) => p.id === pos.id)!;
      expect(str(after.stopLoss)).toBe(str(change.stopLoss));
      expect(str(after.takeProfit)).toBe(str(change.takeProfit));
      const seen = await adapterPosition(pos.id);
      expect(str(seen?.stopLoss)).toBe(str(change.stopLoss));
      expect(str(seen?.takeProfit)).toBe(str(change.takeProfit));
    });

    it('partially closes a position, keeping its id', async () => {
      const { pos } = await open('sell', 3);
      if (!caps().has.partialClose) return refused(() => h.adapter.closePosition(pos.id, vol(1)), 'partialClose');
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
      const out = await h.adapter.placeOrder({
        symbol: SYMBOL,
        side: 'buy',
        type: 'limit',
        volume: vol(1),
        price,
        tag,
      });
      expect(out, JSON.stringify(out)).toMatchObject({ kind: 'confirmed' });
      const simOrder = h.broker.orders(h.simAccountId).find((o) => o.tag === tag);
      expect(simOrder).toMatchObject({ type: 'limit', side: 'buy', status: 'pending' });
      expect(str(simOrder!.price)).toBe(str(price));
      if (out.kind === 'confirmed' && out.brokerOrderId !== null) expect(out.brokerOrderId).toBe(simOrder!.id);
      return simOrder!;
    }

    const limitRequest = (tag: string): PlaceOrderRequest => ({
      symbol: SYMBOL,
      side: 'buy',
      type: 'limit',
      volume: vol(1),
      price: quote().bid.minus(ticks(1000)),
      tag,
    });
    /** A pending order the adapter did not place (made at the broker), for the cases whose adapter cannot place one. */
    const simLimit = () =>
      h.broker.placeOrder(h.simAccountId, { ...limitRequest(newTag()), volume: toLots(vol(1)) }).order;

    it('places and cancels a pending limit order', async () => {
      if (!caps().has.pendingOrders) await refused(() => h.adapter.placeOrder(limitRequest(newTag())), 'pendingOrders');
      if (!caps().has.cancelPendingOrder) {
        const order = simLimit();
        return refused(() => h.adapter.cancelOrder(order.id), 'cancelPendingOrder');
      }
      const order = caps().has.pendingOrders ? await placeLimit(newTag()) : simLimit();
      expect((await h.adapter.listOrders()).some((o) => o.id === order.id)).toBe(true);
      expect(await h.adapter.cancelOrder(order.id)).toMatchObject({ kind: 'confirmed' });
      expect(h.broker.orders(h.simAccountId).some((o) => o.id === order.id)).toBe(false);
      expect((await h.adapter.listOrders()).some((o) => o.id === order.id)).toBe(false);
    });

    it('modifies a pending limit order', async () => {
      if (!caps().has.modifyPendingOrder) {
        expect(
          h.adapter.modifyOrder,
          `${name} has modifyOrder() but declares modifyPendingOrder false`,
        ).toBeUndefined();
        return;
      }
      expect(h.adapter.modifyOrder, `${name} declares modifyPendingOrder but has no modifyOrder()`).toBeDefined();
      const order = caps().has.pendingOrders ? await placeLimit(newTag()) : simLimit();
      const price = order.price!.minus(ticks(200));
      expect(await h.adapter.modifyOrder!(order.id, { price })).toMatchObject({ kind: 'confirmed' });
      expect(str(h.broker.orders(h.simAccountId).find((o) => o.id === order.id)?.price)).toBe(str(price));
      expect(str((await h.adapter.listOrders()).find((o) => o.id === order.id)?.price)).toBe(str(price));
    });

    it('queries order history by time window (without history: no final order is listed)', async () => {
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
      if (!caps().has.orderHistory) {
        expect((await h.adapter.listOrders({ includeHistory: true })).filter((o) => o.status !== 'pending')).toEqual(
          [],
        );
        return;
      }
      const inWindow = await h.adapter.listOrders({
        includeHistory: true,
        from: new Date(before - 60_000),
        to: new Date(Date.now() + 60_000),
      });
      expect(inWindow.some((o) => o.id === hit!.id)).toBe(true);
      const earlier = await h.adapter.listOrders({
        includeHistory: true,
        from: new Date(before - 7_200_000),
        to: new Date(before - 3_600_000),
      });
      expect(earlier.some((o) => o.id === hit!.id)).toBe(false);
    });

    it("lists the deals since a time, oldest first, as the simulator's books hold them: open, partial close, close", async () => {
      // Not optional: a Master's watch replays the deals of a gap, or a trade made while nobody watched is lost.
      expect(h.adapter.listDeals, `${name}: the Master history cursor needs listDeals`).toBeDefined();
      const since = new Date(Date.now() - 1000);
      const { pos } = await open('buy', 3);
      const partly = caps().has.partialClose;
      if (partly) expect(await h.adapter.closePosition(pos.id, vol(1))).toMatchObject({ kind: 'confirmed' });
      expect(await h.adapter.closePosition(pos.id)).toMatchObject({ kind: 'confirmed' });
      const booked = h.broker.dealsOf(h.simAccountId, { positionId: pos.id });
      expect(booked.map((d) => d.entry)).toEqual(partly ? ['in', 'out', 'out'] : ['in', 'out']);
      const deals = (await h.adapter.listDeals!(since)).filter((d) => d.positionId === pos.id);
      expect(deals.map((d) => [d.entry, d.side, d.symbol])).toEqual(booked.map((d) => [d.entry, d.side, SYMBOL]));
      expect(deals.map((d) => str(d.volume))).toEqual(
        booked.map((d) => str(caps().volumeUnit === 'units' ? d.volume.mul(sim.contractSize) : d.volume)),
      );
      expect(deals.map((d) => str(d.price))).toEqual(booked.map((d) => str(d.price)));
      for (const [i, d] of deals.entries()) {
        expect(Math.abs(Date.parse(d.time) - Date.parse(booked[i]!.time)), 'execution time').toBeLessThan(1000);
        expect(typeof d.id).toBe('string');
        // Realized profit, where the platform's history carries it, is the broker's booked amount (to the cent).
        // TradeLocker's and DXtrade's executions carry none (null): the history computes it there.
        if (d.entry !== 'out') continue;
        if (/^(tradelocker|dxtrade)/.test(name)) expect(d.profit ?? null, 'deal profit').toBeNull();
        else expect(Math.abs(d.profit!.minus(booked[i]!.profit).toNumber()), 'deal profit').toBeLessThan(0.006);
      }
      // A window that ends before the trade holds none of its deals.
      const later = await h.adapter.listDeals!(new Date(Date.now() + 60_000));
      expect(later.some((d) => d.positionId === pos.id)).toBe(false);
    });

    it('a write under a closed write gate asks the gate at its wire and sends nothing: an open, a close, a cancel', async () => {
      // The lease's last word: a worker whose lease ran out while a write waited (token refresh, pacer, rate window)
      // must not send it. The adapter's wire asks `passWriteGate()` right before the bytes leave; this gate refuses.
      const { pos } = await open('buy');
      const pending = caps().has.pendingOrders ? await placeLimit(newTag()) : null;
      const books = () =>
        JSON.stringify([h.broker.positions(h.simAccountId), h.broker.orders(h.simAccountId, { includeHistory: true })]);
      const before = books();
      const tag = newTag();
      const writes: Array<[string, () => Promise<unknown>]> = [
        ['placeOrder', () => h.adapter.placeOrder(market('buy', tag))],
        ['closePosition', () => h.adapter.closePosition(pos.id)],
        ...(pending
          ? [['cancelOrder', () => h.adapter.cancelOrder(pending.id)] as [string, () => Promise<unknown>]]
          : []),
      ];
      for (const [op, write] of writes) {
        let asked = 0;
        const answer = await underWriteGate(() => {
          asked++;
          throw new Error('lease ran out');
        }, write).then(
          (o) => o as OrderOutcome,
          (err: unknown) => err,
        );
        expect(asked, `${name}: ${op} never asked the write gate`).toBeGreaterThan(0);
        if (!(answer instanceof Error)) expect((answer as OrderOutcome).kind, op).not.toBe('confirmed');
      }
      expect(books(), 'nothing reached the broker').toBe(before);
    });

    it('finds a position by tag, and reports an unknown tag as not found', async () => {
      // Not optional: an unresolved write is settled only by looking its tag up (never by a blind resend).
      expect(caps().has.lookupByTag, `${name}: the settle loop needs lookupByTag (true or emulated)`).not.toBe(false);
      const { tag, pos } = await open('buy');
      const found = await h.adapter.findByTag(tag);
      expect(found.found).toBe(true);
      expect(found.position?.id).toBe(pos.id);
      expect(await h.adapter.findByTag(`${newTag()}x`.slice(0, caps().correlationTag.maxLength))).toMatchObject({
        found: false,
      });
    });

    it('tagIndex, where offered, answers every tag as findByTag does: position, pending order, refused order, unknown', async () => {
      const { tagIndex } = h.adapter;
      if (!tagIndex) return expect(h.adapter.tagIndex).toBeUndefined();
      const since = new Date(Date.now() - 60_000);
      const { tag: posTag, pos } = await open('buy');
      const pendingTag = newTag();
      const pending = caps().has.pendingOrders ? await placeLimit(pendingTag) : null;
      const refusedTag = newTag();
      h.broker.faults.inject({
        op: 'placeOrder',
        kind: 'cancel_after_timeout',
        refuseAs: 'cancelled',
        accountId: h.simAccountId,
      });
      expect(await h.adapter.placeOrder(market('buy', refusedTag, 1, false))).toMatchObject({ kind: 'unresolved' });
      const unknownTag = `${newTag()}x`.slice(0, caps().correlationTag.maxLength);
      const index = await tagIndex.call(h.adapter, since);
      expect(index.get(posTag)?.position?.id).toBe(pos.id);
      if (pending)
        expect(index.get(pendingTag)).toMatchObject({ found: true, order: { id: pending.id, status: 'pending' } });
      expect(index.get(refusedTag)).toMatchObject({ found: true, order: { status: 'cancelled' } });
      expect(index.get(refusedTag)?.position).toBeUndefined();
      expect(index.get(unknownTag)).toBeUndefined();
      for (const tag of [posTag, refusedTag, ...(pending ? [pendingTag] : [])]) {
        const one = await h.adapter.findByTag(tag);
        expect({ position: index.get(tag)?.position?.id, order: index.get(tag)?.order?.id }).toEqual({
          position: one.position?.id,
          order: one.order?.id,
        });
      }
    });

    it('an invalid volume is refused and opens nothing', async () => {
      const tag = newTag();
      const before = h.broker.positions(h.simAccountId).length;
      const out = await h.adapter.placeOrder({
        ...market('buy', tag, 1, false),
        volume: vol(1).plus(spec.volumeStep.div(2)),
      });
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

    // ---- faults every platform shares --------------------------------------------------------------

    it('a timeout before the broker applied the order is unresolved, and the tag proves it absent', async () => {
      const tag = newTag();
      h.broker.faults.inject({ op: 'placeOrder', kind: 'timeout_before_apply', accountId: h.simAccountId });
      expect(await h.adapter.placeOrder(market('buy', tag))).toMatchObject({ kind: 'unresolved' });
      expect(await h.adapter.findByTag(tag)).toMatchObject({ found: false });
      expect(h.broker.findByTag(h.simAccountId, tag)).toEqual({});
    });

    it('a timeout after a partial close applied is unresolved, and the close happened once', async () => {
      const { pos } = await open('buy', 3);
      if (!caps().has.partialClose) return refused(() => h.adapter.closePosition(pos.id, vol(1)), 'partialClose');
      h.broker.faults.inject({ op: 'closePosition', kind: 'timeout_after_apply', accountId: h.simAccountId });
      const out = await h.adapter.closePosition(pos.id, vol(1));
      expect(out.kind).toBe('unresolved');
      expect(str(h.broker.positions(h.simAccountId).find((p) => p.id === pos.id)?.volume)).toBe(str(toLots(vol(2))));
      // One opening deal and one closing deal: the close was not sent twice.
      expect(h.broker.deals(h.simAccountId).filter((d) => d.positionId === pos.id)).toHaveLength(2);
    });

    it('a connection reset on a write is unresolved (the client cannot know), and nothing was applied', async () => {
      const tag = newTag();
      h.broker.faults.inject({ op: 'placeOrder', kind: 'reset', accountId: h.simAccountId });
      expect(await h.adapter.placeOrder(market('buy', tag))).toMatchObject({ kind: 'unresolved' });
      expect(await h.adapter.findByTag(tag)).toMatchObject({ found: false });
      expect(h.broker.findByTag(h.simAccountId, tag)).toEqual({});
    });

    it('a rate-limited write (429, BLOCKED_PAYLOAD_TYPE) is rejected rate_limited, to send again after its hint, and nothing was applied', async () => {
      const tag = newTag();
      h.broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 1, accountId: h.simAccountId });
      // The engine sends it again after the broker's hint (engine/rate-limit.ts): every adapter carries it.
      expect(await h.adapter.placeOrder(market('buy', tag))).toMatchObject({
        kind: 'rejected',
        code: 'rate_limited',
        retry: { afterSec: 1 },
      });
      expect(h.broker.findByTag(h.simAccountId, tag)).toEqual({});
    });

    it('a partial fill is confirmed with the filled part, and that is what the book holds', async () => {
      const tag = newTag();
      h.broker.faults.inject({ op: 'placeOrder', kind: 'partial_fill', partialRatio: 0.5, accountId: h.simAccountId });
      const out = await h.adapter.placeOrder(market('buy', tag, 4, false));
      expect(out, JSON.stringify(out)).toMatchObject({ kind: 'confirmed' });
      expect(str(simPosition(tag)?.volume)).toBe(str(toLots(vol(2))));
      expect(out.kind === 'confirmed' && str(out.filledVolume)).toBe(str(vol(2)));
      if (out.kind === 'confirmed' && out.positionId !== null) expect(out.positionId).toBe(simPosition(tag)!.id);
    });

    it('an answer later than the timeout is unresolved, and the write applied exactly once', async () => {
      const tag = newTag();
      h.broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: h.timeoutMs * 3, accountId: h.simAccountId });
      expect(await h.adapter.placeOrder(market('buy', tag, 1, false))).toMatchObject({ kind: 'unresolved' });
      await expect
        .poll(() => h.broker.positions(h.simAccountId).filter((p) => p.tag === tag).length, { timeout: 10_000 })
        .toBe(1);
      expect(h.broker.orders(h.simAccountId, { includeHistory: true }).filter((o) => o.tag === tag)).toHaveLength(1);
    });

    // ---- events and account modes ------------------------------------------------------------------

    it('subscribe() reports what happens on the account, wherever it was done (streamed or polled)', async () => {
      expect(caps().has.streamingEvents, `${name}: the watcher needs events, pushed or polled`).not.toBe(false);
      expect(h.adapter.subscribe).toBeDefined();
      const seen: BrokerEvent[] = [];
      const off = h.adapter.subscribe!((ev) => seen.push(ev));
      const saw = (kind: BrokerEvent['kind'], id: string) =>
        seen.some((e) => e.kind === kind && (e.position?.id ?? e.order?.id) === id);
      try {
        // A polling adapter reports changes against its first snapshot: nudge a far pending order until one is
        // reported, which proves the snapshot exists (no sleep, whatever the poll interval).
        const probe = h.broker.placeOrder(h.simAccountId, { ...limitRequest(newTag()), volume: toLots(vol(1)) }).order;
        let nudge = 0;
        await expect
          .poll(
            () => {
              if (seen.some((e) => e.order?.id === probe.id)) return true;
              h.broker.modifyOrder(h.simAccountId, probe.id, { price: probe.price!.minus(ticks(++nudge)) });
              return false;
            },
            { timeout: 20_000, interval: 100 },
          )
          .toBe(true);
        h.broker.cancelOrder(h.simAccountId, probe.id);
        await expect.poll(() => saw('order_cancelled', probe.id), { timeout: 10_000 }).toBe(true);
        // Done at the broker, not through the adapter: only the events can tell the watcher.
        const pos = h.broker.placeOrder(h.simAccountId, {
          symbol: SYMBOL,
          side: 'buy',
          type: 'market',
          volume: toLots(vol(3)),
          tag: newTag(),
        }).position!;
        await expect.poll(() => saw('position_opened', pos.id), { timeout: 10_000 }).toBe(true);
        h.broker.closePosition(h.simAccountId, pos.id, toLots(vol(1)));
        await expect.poll(() => saw('position_reduced', pos.id), { timeout: 10_000 }).toBe(true);
        h.broker.closePosition(h.simAccountId, pos.id);
        await expect.poll(() => saw('position_closed', pos.id), { timeout: 10_000 }).toBe(true);
        // The adapter's own trade is reported too, once (flat again, so a new position on a netting account too).
        const own = await open('buy');
        await expect.poll(() => saw('position_opened', own.pos.id), { timeout: 10_000 }).toBe(true);
        // A stop loss hit at the broker closes the position server-side: reported as closed, in full.
        h.broker.modifyPosition(h.simAccountId, own.pos.id, {
          stopLoss: quote().bid.minus(ticks(50)),
          takeProfit: null,
        });
        h.broker.setPrice(SYMBOL, dec(MID).minus(ticks(500)));
        await expect.poll(() => saw('position_closed', own.pos.id), { timeout: 10_000 }).toBe(true);
        const closed = seen.find((e) => e.kind === 'position_closed' && e.position?.id === own.pos.id)!;
        if (closed.closedVolume !== undefined) expect(str(closed.closedVolume)).toBe(str(vol(1)));
        expect(seen.filter((e) => e.kind === 'position_opened' && e.position?.id === own.pos.id)).toHaveLength(1);
      } finally {
        off();
        h.broker.setPrice(SYMBOL, MID);
        // A streamed quote (cTrader's spots) follows the price back a moment later, on a busy machine later still:
        // the next case measures its stops from the adapter's quote, so it waits for it.
        if (h.adapter.quote)
          await expect
            .poll(async () => str((await h.adapter.quote!(SYMBOL))?.bid), { timeout: 10_000 })
            .toBe(str(quote().bid));
      }
    }, 60_000);

    it('hedging or netting as declared: a second buy opens a second position, or adds to the one', async () => {
      // After a read the adapter knows its account (cTrader learns NETTED from the trader it reads).
      await h.adapter.accountInfo();
      expect(caps().hedging).toBe(h.broker.account(h.simAccountId)!.hedging);
      const a = await open('buy');
      const b = await h.adapter.placeOrder(market('buy', newTag(), 2, false));
      expect(b, JSON.stringify(b)).toMatchObject({ kind: 'confirmed' });
      const mine = h.broker.positions(h.simAccountId).filter((p) => p.symbol === SYMBOL);
      if (caps().hedging) {
        expect(mine).toHaveLength(2);
      } else {
        expect(mine.map((p) => p.id)).toEqual([a.pos.id]);
        expect(str(mine[0]!.volume)).toBe(str(toLots(vol(3))));
        if (b.kind === 'confirmed' && b.positionId !== null) expect(b.positionId).toBe(a.pos.id);
      }
      expect((await h.adapter.listPositions()).filter((p) => p.symbol === SYMBOL)).toHaveLength(mine.length);
    });
  });
}
