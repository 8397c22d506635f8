import { describe, expect, it } from 'vitest';
import { cycleThrough, type GraphMember } from './copy-graph.js';

const m = (groupId: string, identity: string | null): GraphMember => ({ groupId, role: 'master', identity });
const s = (groupId: string, identity: string | null): GraphMember => ({ groupId, role: 'slave', identity });

describe('copy graph cycles', () => {
  it('a Slave that is the same broker account as its own Master is a cycle of one group', () => {
    expect(cycleThrough([m('g1', 'x'), s('g1', 'x')], 'g1')).toEqual(['g1', 'g1']);
  });

  it('a chain without a way back is no cycle; closing it is', () => {
    const chain = [m('g1', 'a'), s('g1', 'b'), m('g2', 'b'), s('g2', 'c'), m('g3', 'c'), s('g3', 'd')];
    for (const g of ['g1', 'g2', 'g3']) expect(cycleThrough(chain, g)).toBeNull();
    const closed = [...chain, s('g3', 'a')];
    expect(cycleThrough(closed, 'g1')).toEqual(['g1', 'g2', 'g3', 'g1']);
    expect(cycleThrough(closed, 'g3')).toEqual(['g3', 'g1', 'g2', 'g3']);
  });

  it('a cycle elsewhere does not name a group outside it; unknown identities make no edges', () => {
    const members = [
      m('g1', 'a'),
      s('g1', 'b'),
      m('g2', 'b'),
      s('g2', 'a'),
      m('g3', 'c'),
      s('g3', 'a'),
      s('g3', null),
      m('g4', null),
    ];
    expect(cycleThrough(members, 'g3')).toBeNull();
    expect(cycleThrough(members, 'g2')).toEqual(['g2', 'g1', 'g2']);
    expect(cycleThrough(members, 'g4')).toBeNull();
  });
});
