import { describe, expect, it } from 'vitest';
import type { Store } from '../store/store.js';
import type { OutcomeWrite } from '../store/repos/trades.js';
import { OutcomeWriter } from './outcome-writer.js';

/** A store whose outcome batches and moves are logged in order; a move can be held until `release` is called. */
function fakeStore(opts: { holdMoves?: boolean } = {}) {
  const log: string[] = [];
  const held: Array<() => void> = [];
  const trades = {
    applyOutcomes: async (writes: OutcomeWrite[], o?: { moveAfter?: boolean }) => {
      log.push(`batch ${writes.length}${o?.moveAfter === false ? '' : ' +move'}`);
    },
    moveRecorded: () => {
      log.push('move');
      return opts.holdMoves ? new Promise<void>((resolve) => held.push(resolve)) : Promise.resolve();
    },
  };
  const release = () => {
    for (const r of held.splice(0)) r();
  };
  return { store: { trades } as unknown as Store, log, release };
}

const write = (i: number): OutcomeWrite => ({ intentId: `int_${i}`, update: { state: 'confirmed' } });
/** Lets every pending callback and immediate run. */
const settle = () => new Promise((r) => setImmediate(r));

describe('OutcomeWriter', () => {
  it('answers the writers of a burst once their batches commit, then moves the recorded intents once', async () => {
    const { store, log, release } = fakeStore({ holdMoves: true });
    const w = new OutcomeWriter(store);
    // 1200 outcomes arriving together: three batches of at most 500.
    const done = Promise.all(Array.from({ length: 1200 }, (_, i) => w.push(write(i))));
    // Every writer is answered while the move is still running: a Master's next action does not wait for it.
    await done;
    expect(log).toEqual(['batch 500', 'batch 500', 'batch 200', 'move']);
    release();
    await w.idle();
    expect(log).toEqual(['batch 500', 'batch 500', 'batch 200', 'move']);
  });

  it('writes what arrives during the move, then moves again', async () => {
    const { store, log, release } = fakeStore({ holdMoves: true });
    const w = new OutcomeWriter(store);
    await w.push(write(1));
    expect(log).toEqual(['batch 1', 'move']);
    // Pushed while the move is held: the running loop takes it after the move.
    let second = false;
    void w.push(write(2)).then(() => {
      second = true;
    });
    await settle();
    expect(second).toBe(false);
    release();
    await settle();
    await settle();
    expect(second).toBe(true);
    release();
    await w.idle();
    expect(log).toEqual(['batch 1', 'move', 'batch 1', 'move']);
  });

  it('moves at least every 8 batches while outcomes keep coming', async () => {
    const { store, log } = fakeStore();
    const w = new OutcomeWriter(store);
    // 20 batches' worth queued at once: the queue is never empty between them.
    await Promise.all(Array.from({ length: 20 * 500 }, (_, i) => w.push(write(i))));
    await w.idle();
    const moves = log.flatMap((l, i) => (l === 'move' ? [i] : []));
    expect(log.filter((l) => l.startsWith('batch')).length).toBe(20);
    expect(moves).toEqual([8, 17, 22]);
    expect(log.every((l) => !l.endsWith('+move'))).toBe(true);
  });

  it('retries a refused batch one write at a time, each answered on its own, with the move deferred as well', async () => {
    const log: string[] = [];
    const trades = {
      applyOutcomes: async (writes: OutcomeWrite[], o?: { moveAfter?: boolean }) => {
        log.push(`batch ${writes.length} moveAfter=${String(o?.moveAfter)}`);
        if (writes.length > 1 || writes[0]!.intentId === 'int_1') throw new Error('refused');
      },
      moveRecorded: async () => {
        log.push('move');
      },
    };
    const w = new OutcomeWriter({ trades } as unknown as Store);
    const results = await Promise.allSettled([0, 1, 2].map((i) => w.push(write(i))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await w.idle();
    expect(log).toEqual([
      'batch 3 moveAfter=false',
      'batch 1 moveAfter=false',
      'batch 1 moveAfter=false',
      'batch 1 moveAfter=false',
      'move',
    ]);
  });
});
