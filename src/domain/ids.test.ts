import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';

describe('newId', () => {
  it('gives prefixed ids of a fixed shape, all different, across many refills of its random pool', () => {
    const ids = Array.from({ length: 5000 }, () => newId('int'));
    for (const id of ids) expect(id).toMatch(/^int_[0-9a-z]{25}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // The random part differs even where the time part is the same.
    expect(new Set(ids.map((id) => id.slice(13))).size).toBe(ids.length);
  });

  it('starts with the creation time, so later ids sort after earlier ones', () => {
    const a = newId('trd');
    const t = Date.now();
    while (Date.now() === t) {
      // wait for the next millisecond: the time part is in ms
    }
    expect(newId('trd') > a).toBe(true);
  });
});
