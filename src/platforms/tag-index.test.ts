import { describe, expect, it } from 'vitest';
import type { Order, Position } from '../domain/types.js';
import { indexTags } from './tag-index.js';

const order = (id: string, tag: string | null, status = 'filled') => ({ id, tag, status }) as unknown as Order;
const position = (id: string, tag: string | null) => ({ id, tag }) as unknown as Position;

describe('indexTags', () => {
  it('answers as findByTag: a position first, then a pending order, then the newest history order', () => {
    const index = indexTags(
      [position('p1', 'a')],
      [order('o2', 'b', 'pending'), order('o3', 'a', 'pending')],
      [order('h1', 'a'), order('h2', 'c', 'cancelled'), order('h3', 'c'), order('h4', 'b')],
    );
    expect(index.get('a')).toEqual({ found: true, position: position('p1', 'a') });
    expect(index.get('b')).toEqual({ found: true, order: order('o2', 'b', 'pending') });
    expect(index.get('c')?.order?.id).toBe('h3');
    expect(index.has('')).toBe(false);
  });

  it('skips untagged items', () => {
    expect(indexTags([position('p', null)], [order('o', null, 'pending')], [order('h', null)]).size).toBe(0);
  });
});

describe('indexTags with orderWithPosition', () => {
  it("a found position also names its tag's order, pending first", () => {
    const index = indexTags([position('p', 'a')], [], [order('h', 'a')], { orderWithPosition: true });
    expect(index.get('a')).toEqual({ found: true, position: position('p', 'a'), order: order('h', 'a') });
  });
});
