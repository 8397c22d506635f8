import { describe, expect, it } from 'vitest';
import type { BrokerAdapter, TagLookup } from '../platforms/adapter.js';
import { TagSnapshot } from './tag-snapshot.js';

function fakeAdapter(tags: Map<string, TagLookup>, withIndex = true) {
  const calls = { index: 0, single: 0, since: [] as Date[] };
  const adapter = {
    findByTag: async (tag: string) => {
      calls.single++;
      return tags.get(tag) ?? { found: false };
    },
    ...(withIndex
      ? {
          tagIndex: async (since: Date) => {
            calls.index++;
            calls.since.push(since);
            return new Map(tags);
          },
        }
      : {}),
  } as unknown as BrokerAdapter;
  return { adapter, calls };
}

const hit = (id: string): TagLookup => ({ found: true, order: { id } as never });

describe('TagSnapshot', () => {
  it('answers many tags of one account from one reading, searching history from before the oldest write', async () => {
    const tags = new Map([...Array(50).keys()].map((i) => [`t${i}`, hit(`o${i}`)]));
    const { adapter, calls } = fakeAdapter(tags);
    const oldest = new Date('2026-11-22T10:00:00Z');
    const snap = new TagSnapshot(adapter, oldest, () => 1_000);
    for (let i = 0; i < 50; i++) expect((await snap.find(`t${i}`)).order?.id).toBe(`o${i}`);
    expect(calls).toMatchObject({ index: 1, single: 0 });
    expect(calls.since[0]!.getTime()).toBeLessThan(oldest.getTime());
  });

  it('trusts an absence only from a young reading: an older one is read again before it says absent', async () => {
    const tags = new Map<string, TagLookup>();
    const { adapter, calls } = fakeAdapter(tags);
    let now = 0;
    const snap = new TagSnapshot(adapter, new Date(0), () => now);
    expect(await snap.find('late')).toEqual({ found: false });
    now = 1_500;
    expect(await snap.find('late')).toEqual({ found: false });
    expect(calls.index).toBe(1);
    // The write reaches the broker after the first reading; an absence from that reading is now too old.
    tags.set('late', hit('o-late'));
    now = 2_500;
    expect((await snap.find('late')).order?.id).toBe('o-late');
    expect(calls.index).toBe(2);
  });

  it('falls back to one findByTag per tag where the adapter has no tagIndex', async () => {
    const { adapter, calls } = fakeAdapter(new Map([['a', hit('1')]]), false);
    const snap = new TagSnapshot(adapter, new Date(0), () => 0);
    expect((await snap.find('a')).found).toBe(true);
    expect((await snap.find('b')).found).toBe(false);
    expect(calls).toMatchObject({ index: 0, single: 2 });
  });
});
