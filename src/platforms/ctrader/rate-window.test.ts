import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateWindow, type RateSlot } from './rate-window.js';

describe('RateWindow', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  /** Acquires in the background; `got` fills in the order slots are handed out. */
  const take = (w: RateWindow, n: number) => {
    const got: Array<{ i: number; at: number; slot: RateSlot }> = [];
    for (let i = 0; i < n; i++) void w.acquire().then((slot) => got.push({ i, at: Date.now(), slot }));
    return got;
  };

  it('hands out the limit at once and holds the next until a second after an answer', async () => {
    const w = new RateWindow(2);
    const got = take(w, 3);
    await vi.advanceTimersByTimeAsync(5_000);
    // Nothing answered: the server may not have counted them yet, however long ago they went.
    expect(got.map((g) => g.i)).toEqual([0, 1]);
    got[1]!.slot.answered();
    await vi.advanceTimersByTimeAsync(999);
    expect(got).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(got.map((g) => [g.i, g.at])).toEqual([
      [0, 0],
      [1, 0],
      [2, 6_000],
    ]);
  });

  it('counts the first answer only, and serves waiters in order', async () => {
    const w = new RateWindow(1);
    const got = take(w, 3);
    await vi.advanceTimersByTimeAsync(0);
    got[0]!.slot.answered();
    await vi.advanceTimersByTimeAsync(500);
    got[0]!.slot.answered(); // a later message of the same answer does not extend the slot
    await vi.advanceTimersByTimeAsync(500);
    expect(got.map((g) => g.i)).toEqual([0, 1]);
    got[1]!.slot.answered();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(got.map((g) => [g.i, g.at])).toEqual([
      [0, 0],
      [1, 1_000],
      [2, 2_000],
    ]);
  });

  it('never has more than the limit taken within any second of answers', async () => {
    const w = new RateWindow(5);
    const got = take(w, 40);
    // Answers come back 37 ms after each send: every slot is answered as soon as it is taken, plus the delay.
    for (let t = 0; t < 20_000 && !(got.length === 40 && got.every((g) => 'done' in g)); t += 1) {
      for (const g of got)
        if (!('done' in g) && Date.now() - g.at >= 37) {
          g.slot.answered();
          Object.assign(g, { done: Date.now() });
        }
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(got).toHaveLength(40);
    const sends = got.map((g) => g.at);
    const answers = got.map((g) => (g as unknown as { done: number }).done);
    // A send is never within a second of the answer of the request five before it.
    for (let i = 5; i < sends.length; i++) expect(sends[i]! - answers[i - 5]!).toBeGreaterThanOrEqual(1_000);
    // and it does not wait longer than that: 35 more after the first 5, one second and 37 ms per round of 5.
    expect(sends.at(-1)).toBe(7 * 1_037);
  });

  it('a waiter given up on (aborted) leaves the queue: never handed a slot, the next one gets its place', async () => {
    const w = new RateWindow(1);
    const first = await w.acquire();
    const ctl = new AbortController();
    const order: string[] = [];
    const gaveUp = w.acquire(ctl.signal).then(
      () => order.push('aborted one got a slot'),
      (err: unknown) => order.push(`rejected: ${(err as Error).name}`),
    );
    const next = w.acquire().then(() => order.push('next'));
    ctl.abort();
    await gaveUp;
    first.answered();
    await vi.advanceTimersByTimeAsync(1_000);
    await next;
    expect(order).toEqual(['rejected: AbortError', 'next']);
    // Already aborted: refused at once, nothing queued.
    await expect(w.acquire(ctl.signal)).rejects.toThrow();
  });

  it('counts the acquires that had to queue, and the slots still held', async () => {
    const w = new RateWindow(2);
    const got = take(w, 3);
    await vi.advanceTimersByTimeAsync(0);
    expect(w.waited).toBe(1);
    expect(w.held()).toBe(2);
    for (const g of got) g.slot.answered();
    await vi.advanceTimersByTimeAsync(999);
    expect(w.held()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    // The third was handed a slot at 1 s and answered then: held until 2 s.
    expect(got).toHaveLength(3);
    got[2]!.slot.answered();
    expect(w.held()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(w.held()).toBe(0);
    expect(w.waited).toBe(1);
  });

  it('keeps the reserve for writes: a read burst that fills its share leaves a fan-out its places at once', async () => {
    // 50 a second, 15 kept for writes: a health round's 54 reads take 35 places and queue the rest.
    const w = new RateWindow(50, 1_000, Date.now, 15);
    const reads: RateSlot[] = [];
    for (let i = 0; i < 54; i++) void w.acquire(undefined, 'read').then((s) => reads.push(s));
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toHaveLength(35);
    // A fan-out of 13 orders on the connection: every one handed its place now, none behind the reads.
    const writes: number[] = [];
    for (let i = 0; i < 13; i++) void w.acquire(undefined, 'write').then(() => writes.push(Date.now()));
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toEqual(Array(13).fill(0));
    expect(w.held()).toBe(48);
    // The reads answered at 10 ms: the queued 19 get their places a second later, as the reserve allows.
    await vi.advanceTimersByTimeAsync(10);
    for (const r of reads.splice(0)) r.answered();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(reads).toHaveLength(19);
  });

  it('serves a waiting write before reads that queued earlier, and lets writes take the whole window', async () => {
    const w = new RateWindow(3, 1_000, Date.now, 1);
    const order: string[] = [];
    const slots: RateSlot[] = [];
    const get = (name: string, lane: 'read' | 'write') =>
      void w.acquire(undefined, lane).then((s) => {
        order.push(name);
        slots.push(s);
      });
    get('w1', 'write');
    get('w2', 'write');
    get('w3', 'write');
    get('r1', 'read');
    get('w4', 'write');
    await vi.advanceTimersByTimeAsync(0);
    // Writes may take all three places; reads never the last one.
    expect(order).toEqual(['w1', 'w2', 'w3']);
    for (const s of slots) s.answered();
    await vi.advanceTimersByTimeAsync(1_000);
    // Three places free again: the write that queued after the read goes first, then the read (two of three held).
    expect(order).toEqual(['w1', 'w2', 'w3', 'w4', 'r1']);
  });

  it('never starves reads entirely: a window with a reserve as large as itself still lets one read through', async () => {
    const w = new RateWindow(2, 1_000, Date.now, 5);
    const got: string[] = [];
    void w.acquire(undefined, 'read').then(() => got.push('r1'));
    void w.acquire(undefined, 'read').then(() => got.push('r2'));
    await vi.advanceTimersByTimeAsync(0);
    expect(got).toEqual(['r1']);
  });
});
