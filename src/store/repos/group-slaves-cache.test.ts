import { describe, expect, it } from 'vitest';
import { GroupSlavesCache, type GroupSlave } from './group-slaves-cache.js';

const slaves = (n: number) => Array.from({ length: n }, () => ({}) as GroupSlave);

describe('GroupSlavesCache', () => {
  it('holds at most its bound of Slaves, dropping the least recently used groups first', () => {
    const c = new GroupSlavesCache<{ digest: string; slaves: GroupSlave[] }>(10);
    c.set('a', { digest: 'a1', slaves: slaves(4) });
    c.set('b', { digest: 'b1', slaves: slaves(4) });
    expect(c.get('a')?.digest).toBe('a1');
    c.set('c', { digest: 'c1', slaves: slaves(4) });
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')?.digest).toBe('a1');
    expect(c.get('c')?.digest).toBe('c1');
  });

  it('replaces a group in place of counting it twice, and keeps a group larger than its bound alone', () => {
    const c = new GroupSlavesCache<{ digest: string; slaves: GroupSlave[] }>(10);
    c.set('a', { digest: 'a1', slaves: slaves(6) });
    c.set('a', { digest: 'a2', slaves: slaves(6) });
    expect(c.get('a')?.digest).toBe('a2');
    c.set('b', { digest: 'b1', slaves: slaves(4) });
    expect(c.get('a')?.digest).toBe('a2');
    c.set('big', { digest: 'x', slaves: slaves(20) });
    expect(c.get('a')).toBeUndefined();
    expect(c.get('b')).toBeUndefined();
    expect(c.get('big')?.digest).toBe('x');
  });
});
