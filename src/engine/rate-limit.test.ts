import { describe, expect, it } from 'vitest';
import { StaleLeaseError } from '../domain/lease.js';
import { rejected, retryLater, type OrderOutcome } from '../platforms/adapter.js';
import {
  copyRetryWindow,
  RetriesStopped,
  RetryHolds,
  retryHint,
  retryWaitMs,
  sendPaced,
  type RetryWindow,
} from './rate-limit.js';

const confirmed: OrderOutcome = {
  kind: 'confirmed',
  brokerOrderId: 'o1',
  positionId: 'p1',
  filledVolume: null,
  fillPrice: null,
  brokerTime: null,
};
const limited = (sec: number | null): OrderOutcome =>
  rejected('rate_limited', 'rate limited by TradeLocker', { status: 429 }, retryLater(sec));

/** A clock that only the waits move: the tests never sleep. */
function fakeTime() {
  const t = { now: 0, waits: [] as number[] };
  return {
    t,
    now: () => t.now,
    sleep: async (ms: number) => {
      t.waits.push(ms);
      t.now += ms;
    },
  };
}

/** The window a copy of an open gets: the rule's max delay from the Master's action at t = 0. */
function openWindow(
  ft: ReturnType<typeof fakeTime>,
  maxDelayMs = 60_000,
  status = async () => null,
): () => RetryWindow {
  return () =>
    copyRetryWindow({
      now: ft.now,
      sleep: ft.sleep,
      actionAt: 0,
      maxDelayMs,
      addsExposure: true,
      slaveStatus: status,
    });
}

/** A broker that answers 429 (Retry-After `sec`) until `until` on the clock, then fills; it logs each try's time. */
function brokerLimitedUntil(ft: ReturnType<typeof fakeTime>, until: number, sec: number | null) {
  const tries: number[] = [];
  return {
    tries,
    send: () => {
      tries.push(ft.t.now);
      return Promise.resolve(ft.t.now < until ? limited(sec) : confirmed);
    },
  };
}

describe('retryHint', () => {
  it('takes the hint the adapter carried, or the raw one of an older adapter, and nothing unknown', () => {
    expect(retryHint(limited(3))).toEqual({ retryable: true, afterMs: 3000 });
    expect(retryHint(limited(null))).toEqual({ retryable: true, afterMs: null });
    expect(retryHint(rejected('rate_limited', 'x', { retryAfterSec: 2 }))).toEqual({ retryable: true, afterMs: 2000 });
    expect(retryHint({ kind: 'denied', code: 'rate_limited', message: 'our pacing' })).toEqual({
      retryable: true,
      afterMs: null,
    });
    expect(retryHint(rejected('not_enough_money', 'x'))).toEqual({ retryable: false });
    // An unknown outcome may have been applied: settled by its tag, never sent again here.
    expect(retryHint({ kind: 'unresolved', code: 'rate_limited', message: 'x' })).toEqual({ retryable: false });
  });

  it('waits the broker hint, never less than a backoff from the second refusal; 1 s without a hint', () => {
    expect([0, 1, 2, 3, 4, 5].map((r) => retryWaitMs(3000, r))).toEqual([3000, 3000, 3000, 3000, 4000, 8000]);
    expect([0, 1, 2, 3, 4, 5, 6].map((r) => retryWaitMs(null, r))).toEqual([1000, 1000, 1000, 2000, 4000, 8000, 8000]);
    expect(retryWaitMs(0, 0)).toBe(0);
  });
});

describe('sendPaced', () => {
  it('keeps the broker answer when the answer hook throws', async () => {
    const out = await sendPaced(
      () => Promise.resolve(confirmed),
      () => {
        throw new Error('no window is built for a copy the broker took');
      },
      () => {
        throw new Error('metrics broke');
      },
    );
    expect(out).toBe(confirmed);
  });

  it('tells the hook each answer with its attempt, and not a send that threw', async () => {
    const ft = fakeTime();
    const seen: Array<[string, number]> = [];
    const answers: Array<() => Promise<OrderOutcome>> = [
      () => Promise.resolve(limited(0)),
      () => Promise.reject(new Error('socket closed')),
    ];
    let n = 0;
    const out = await sendPaced(
      () => answers[n++]!(),
      openWindow(ft),
      (o, retry) => seen.push([o.kind, retry]),
    );
    expect(seen).toEqual([['rejected', 0]]);
    expect(out).toMatchObject({ kind: 'unresolved', code: 'adapter_error', message: 'socket closed' });
  });

  it('a broker answering 429 for 15 s: sent again past the old 5 tries, and filled once when it recovers', async () => {
    // Seen: Retry-After 3 s for ~15 s; the copy used to end rejected after 5 tries (12 s), well inside the rule's
    // 60 s max delay, and the Slave never got the position.
    const ft = fakeTime();
    const broker = brokerLimitedUntil(ft, 15_000, 3);
    const out = await sendPaced(broker.send, openWindow(ft));
    expect(out).toBe(confirmed);
    expect(broker.tries).toEqual([0, 3000, 6000, 9000, 12_000, 16_000]);
    // Each wait honoured Retry-After, the later ones backing off past it.
    expect(ft.t.waits).toEqual([3000, 3000, 3000, 3000, 4000]);
  });

  it('a refusal that outlasts the max delay ends rate_limited, saying it gave up and why; no try after it', async () => {
    const ft = fakeTime();
    const broker = brokerLimitedUntil(ft, Number.POSITIVE_INFINITY, 3);
    const out = await sendPaced(broker.send, openWindow(ft, 30_000));
    expect(out).toMatchObject({ kind: 'rejected', code: 'rate_limited' });
    // Retry-After 3 s, then the backoff past it (4 s, 8 s); the next try, at 32 s, would be past the 30 s.
    expect(broker.tries).toEqual([0, 3000, 6000, 9000, 12_000, 16_000, 24_000]);
    expect((out as { message: string }).message).toBe(
      "gave up after 7 tries over 24 s: max delay (30 s since the Master's action) passed (the next try, in 8 s, " +
        'would be after it); last answer: rate limited by TradeLocker',
    );
  });

  it('nothing retryable is given up within 10 s of the action under the default 60 s max delay', async () => {
    const ft = fakeTime();
    const broker = brokerLimitedUntil(ft, Number.POSITIVE_INFINITY, null);
    const out = await sendPaced(broker.send, openWindow(ft));
    expect(out).toMatchObject({ kind: 'rejected', code: 'rate_limited' });
    expect(broker.tries.at(-1)).toBeGreaterThan(50_000);
    expect(broker.tries.at(-1)).toBeLessThanOrEqual(60_000);
  });

  it('a hint longer than what is left of the max delay ends it at once, without a try the broker would refuse', async () => {
    const ft = fakeTime();
    ft.t.now = 50_000;
    const broker = brokerLimitedUntil(ft, Number.POSITIVE_INFINITY, 20);
    const out = await sendPaced(broker.send, openWindow(ft));
    expect(broker.tries).toEqual([50_000]);
    expect(ft.t.waits).toEqual([]);
    expect((out as { message: string }).message).toMatch(/^gave up after 1 try over 0 s: max delay/);
  });

  it('never sends again an unknown outcome or a business refusal', async () => {
    for (const answer of [
      { kind: 'unresolved', code: 'write_outcome_unknown', message: 'timeout' } as const,
      rejected('not_enough_money', 'no money'),
    ]) {
      const ft = fakeTime();
      let n = 0;
      const out = await sendPaced(() => {
        n++;
        return Promise.resolve(answer);
      }, openWindow(ft));
      expect(out).toBe(answer);
      expect(n).toBe(1);
    }
  });

  it('stops when the Slave was locked or paused meanwhile: a retry must not reopen what a panic-close closes', async () => {
    const ft = fakeTime();
    const broker = brokerLimitedUntil(ft, Number.POSITIVE_INFINITY, 2);
    let status: 'connected' | 'locked' = 'connected';
    const out = await sendPaced(
      () => {
        if (broker.tries.length === 1) status = 'locked';
        return broker.send();
      },
      openWindow(ft, 60_000, async () => status as never),
    );
    expect(broker.tries).toHaveLength(2);
    expect(out).toMatchObject({
      kind: 'rejected',
      code: 'slave_not_eligible',
      message: 'stopped retrying after 2 tries: the account is locked now',
    });
  });

  it('a close (no new exposure) keeps trying 2 minutes from its first refusal, even past the max delay', async () => {
    const ft = fakeTime();
    ft.t.now = 55_000;
    const broker = brokerLimitedUntil(ft, 100_000, 5);
    const out = await sendPaced(broker.send, () =>
      copyRetryWindow({
        now: ft.now,
        sleep: ft.sleep,
        actionAt: 0,
        maxDelayMs: 60_000,
        addsExposure: false,
        slaveStatus: async () => 'locked',
      }),
    );
    expect(out).toBe(confirmed);
    expect(broker.tries.at(-1)).toBeGreaterThanOrEqual(100_000);
  });

  it('counts the copy and the broker hold for admission control while it waits, and forgets it after', async () => {
    const ft = fakeTime();
    const holds = new RetryHolds();
    const seen: Array<ReturnType<RetryHolds['of']>> = [];
    const broker = brokerLimitedUntil(ft, 5000, 3);
    const out = await sendPaced(broker.send, () =>
      copyRetryWindow({
        now: ft.now,
        sleep: async (ms) => {
          seen.push(holds.of('acc_s', ft.t.now));
          await ft.sleep(ms);
        },
        holds: { registry: holds, accountId: 'acc_s' },
        actionAt: 0,
        maxDelayMs: 60_000,
        addsExposure: true,
        slaveStatus: async () => null,
      }),
    );
    expect(out).toBe(confirmed);
    expect(seen).toEqual([
      { waiting: 1, heldForMs: 3000 },
      { waiting: 1, heldForMs: 3000 },
    ]);
    expect(holds.of('acc_s', ft.t.now)).toEqual({ waiting: 0, heldForMs: 0 });
  });

  it('a stopping process ends the wait at once, with no outcome and no further try', async () => {
    const holds = new RetryHolds();
    let tries = 0;
    const t0 = Date.now();
    const paced = sendPaced(
      () => {
        tries++;
        // The stop comes while the copy waits out a 30 s Retry-After on the real timer.
        setImmediate(() => holds.stop());
        return Promise.resolve(limited(30));
      },
      () =>
        copyRetryWindow({
          now: Date.now,
          sleep: undefined,
          holds: { registry: holds, accountId: 'acc_s' },
          actionAt: Date.now(),
          maxDelayMs: 60_000,
          addsExposure: true,
          slaveStatus: async () => null,
        }),
    );
    await expect(paced).rejects.toBeInstanceOf(RetriesStopped);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(tries).toBe(1);
    expect(holds.of('acc_s', Date.now())).toEqual({ waiting: 0, heldForMs: 0 });
    // A copy refused after the stop does not wait at all.
    await expect(holds.wait('acc_s', Date.now() + 1000, async () => undefined)).rejects.toBeInstanceOf(RetriesStopped);
  });

  it('lets a lost lease through as a rejection', async () => {
    const ft = fakeTime();
    const err = new StaleLeaseError('account:a1', undefined, null);
    await expect(sendPaced(() => Promise.reject(err), openWindow(ft))).rejects.toBe(err);
  });
});
