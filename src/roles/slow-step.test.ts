import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from 'pino';
import { slowStepWatch } from './slow-step.js';

describe('slowStepWatch', () => {
  afterEach(() => vi.useRealTimers());

  it('says which step is running while it lasts, and nothing once done', () => {
    vi.useFakeTimers();
    const warn = vi.fn();
    const watch = slowStepWatch({ warn } as unknown as Logger, 'taking leases over', 1000);
    watch.step('settling');
    vi.advanceTimersByTime(999);
    expect(warn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatchObject({ step: 'settling' });
    expect(warn.mock.calls[0]![1]).toBe('taking leases over is slow');
    watch.step('watching');
    vi.advanceTimersByTime(1000);
    expect(warn.mock.calls[1]![0]).toMatchObject({ step: 'watching' });
    watch.done();
    vi.advanceTimersByTime(5000);
    expect(warn).toHaveBeenCalledTimes(2);
  });
});
