import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from '../domain/decimal.js';
import { proportionalClose } from './partial-close.js';

const hundredths = (min: number, max: number) => fc.integer({ min, max }).map((n) => new Decimal(n).div(100));

describe('proportionalClose', () => {
  const cases = fc.record({
    masterBefore: hundredths(2, 10_000),
    closedFrac: fc.integer({ min: 1, max: 999 }),
    slaveVolume: hundredths(1, 10_000),
    stepMin: fc.constantFrom(
      [new Decimal('0.01'), new Decimal('0.01')],
      [new Decimal('0.01'), new Decimal('0.1')],
      [new Decimal('0.1'), new Decimal('0.1')],
      [new Decimal('1'), new Decimal('1')],
    ),
  });

  it('closes a multiple of the step, never more than the position, and never leaves a rest below the minimum', () => {
    fc.assert(
      fc.property(cases, ({ masterBefore, closedFrac, slaveVolume, stepMin: [step, minVolume] }) => {
        const closed = Decimal.max(
          new Decimal('0.01'),
          masterBefore.mul(closedFrac).div(1000).toDecimalPlaces(2, Decimal.ROUND_DOWN),
        );
        const r = proportionalClose({ masterBefore, closed, slaveVolume, step, minVolume });
        if (r.kind === 'partial') {
          expect(r.volume.mod(step).isZero()).toBe(true);
          expect(r.volume.gte(minVolume)).toBe(true);
          expect(r.volume.lt(slaveVolume)).toBe(true);
          expect(slaveVolume.minus(r.volume).gte(minVolume)).toBe(true);
        }
      }),
    );
  });

  it('stays within half a step of the exact share, unless it closes fully to avoid a too-small rest or skips below the minimum', () => {
    fc.assert(
      fc.property(cases, ({ masterBefore, closedFrac, slaveVolume, stepMin: [step, minVolume] }) => {
        const closed = Decimal.max(
          new Decimal('0.01'),
          masterBefore.mul(closedFrac).div(1000).toDecimalPlaces(2, Decimal.ROUND_DOWN),
        );
        const share = slaveVolume.mul(closed).div(masterBefore);
        const r = proportionalClose({ masterBefore, closed, slaveVolume, step, minVolume });
        if (closed.gte(masterBefore)) return expect(r.kind).toBe('full');
        if (r.kind === 'partial') expect(r.volume.minus(share).abs().lte(step.div(2))).toBe(true);
        if (r.kind === 'skip') expect(share.lt(minVolume.plus(step.div(2)))).toBe(true);
        if (r.kind === 'full') {
          // Full only when the rounded share reaches the position or leaves less than the minimum behind.
          expect(slaveVolume.minus(share).lt(minVolume.plus(step.div(2)))).toBe(true);
        }
      }),
    );
  });

  it('a whole close of the Master is a full close of every Slave; examples of the edges', () => {
    const d = (s: string) => new Decimal(s);
    expect(
      proportionalClose({
        masterBefore: d('1'),
        closed: d('1'),
        slaveVolume: d('0.37'),
        step: d('0.01'),
        minVolume: d('0.01'),
      }),
    ).toEqual({ kind: 'full' });
    expect(
      proportionalClose({
        masterBefore: d('1'),
        closed: d('0.5'),
        slaveVolume: d('0.3'),
        step: d('0.01'),
        minVolume: d('0.01'),
      }),
    ).toEqual({ kind: 'partial', volume: d('0.15') });
    expect(
      proportionalClose({
        masterBefore: d('1'),
        closed: d('0.5'),
        slaveVolume: d('0.03'),
        step: d('0.01'),
        minVolume: d('0.01'),
      }),
    ).toEqual({ kind: 'partial', volume: d('0.02') });
    expect(
      proportionalClose({
        masterBefore: d('1'),
        closed: d('0.1'),
        slaveVolume: d('0.04'),
        step: d('0.01'),
        minVolume: d('0.01'),
      }),
    ).toMatchObject({ kind: 'skip', reason: 'volume_below_minimum' });
    expect(
      proportionalClose({
        masterBefore: d('1'),
        closed: d('0.9'),
        slaveVolume: d('0.1'),
        step: d('0.01'),
        minVolume: d('0.02'),
      }),
    ).toMatchObject({ kind: 'full', detail: expect.stringContaining('less than the minimum') });
  });
});
