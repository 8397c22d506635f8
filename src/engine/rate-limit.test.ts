import { describe, expect, it } from 'vitest';
import { StaleLeaseError } from '../domain/lease.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import { sendPaced } from './rate-limit.js';

const confirmed: OrderOutcome = {
  kind: 'confirmed',
  brokerOrderId: 'o1',
  positionId: 'p1',
  filledVolume: null,
  fillPrice: null,
  brokerTime: null,
};
// Retry after 0 s: the test does not wait on the clock.
const limited: OrderOutcome = {
  kind: 'rejected',
  code: 'rate_limited',
  message: 'slow down',
  raw: { retryAfterSec: 0 },
};

describe('sendPaced', () => {
  it('keeps the broker answer when the answer hook throws', async () => {
    const out = await sendPaced(
      () => Promise.resolve(confirmed),
      () => false,
      () => {
        throw new Error('metrics broke');
      },
    );
    expect(out).toBe(confirmed);
  });

  it('tells the hook each answer with its attempt, and not a send that threw', async () => {
    const seen: Array<[string, number]> = [];
    const answers: Array<() => Promise<OrderOutcome>> = [
      () => Promise.resolve(limited),
      () => Promise.reject(new Error('socket closed')),
    ];
    let n = 0;
    const out = await sendPaced(
      () => answers[n++]!(),
      () => false,
      (o, retry) => seen.push([o.kind, retry]),
    );
    expect(seen).toEqual([['rejected', 0]]);
    expect(out).toMatchObject({ kind: 'unresolved', code: 'adapter_error', message: 'socket closed' });
  });

  it('sends again after a rate-limit refusal until the broker accepts', async () => {
    let n = 0;
    const out = await sendPaced(
      () => Promise.resolve(n++ < 2 ? limited : confirmed),
      () => false,
    );
    expect(out).toBe(confirmed);
    expect(n).toBe(3);
  });

  it('returns the refusal when waiting would make the copy stale', async () => {
    let n = 0;
    const out = await sendPaced(
      () => {
        n++;
        return Promise.resolve(limited);
      },
      () => true,
    );
    expect(out).toBe(limited);
    expect(n).toBe(1);
  });

  it('lets a lost lease through as a rejection', async () => {
    const err = new StaleLeaseError('account:a1', undefined, null);
    await expect(
      sendPaced(
        () => Promise.reject(err),
        () => false,
      ),
    ).rejects.toBe(err);
  });
});
