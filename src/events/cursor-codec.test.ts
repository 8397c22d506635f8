import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EventCursors } from './cursor-codec.js';

describe('EventCursors', () => {
  const key = randomBytes(32);
  const cursors = new EventCursors([key]);

  it('gives back the position it was made from, for the same user only', () => {
    for (const p of [0, 1, 2, 4096, Number.MAX_SAFE_INTEGER]) {
      const c = cursors.encode('usr_a', p);
      expect(c).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(cursors.decode('usr_a', c)).toBe(p);
      expect(cursors.decode('usr_b', c)).toBeNull();
    }
  });

  it('hides the position: neighbouring positions share nothing, and two users never get the same cursor', () => {
    const a1 = Buffer.from(cursors.encode('usr_a', 41), 'base64url');
    const a2 = Buffer.from(cursors.encode('usr_a', 42), 'base64url');
    // One AES block: a change of one bit in the position changes about half of the 128 bits of the cursor.
    let differing = 0;
    for (let i = 0; i < 16; i++) for (let b = a1[i]! ^ a2[i]!; b; b >>= 1) differing += b & 1;
    expect(differing).toBeGreaterThan(32);
    expect(cursors.encode('usr_a', 42)).not.toBe(cursors.encode('usr_b', 42));
    expect(cursors.encode('usr_a', 42)).toBe(cursors.encode('usr_a', 42));
  });

  it('refuses what it did not make; 0 is the start', () => {
    expect(cursors.decode('usr_a', '0')).toBe(0);
    for (const bad of ['', '42', 'x'.repeat(22), 'A'.repeat(21), `${cursors.encode('usr_a', 1)}A`])
      expect(cursors.decode('usr_a', bad)).toBeNull();
    expect(new EventCursors([randomBytes(32)]).decode('usr_a', cursors.encode('usr_a', 7))).toBeNull();
  });

  it('still reads cursors made before a credential key rotation', () => {
    const next = randomBytes(32);
    const rotated = new EventCursors([next, key]);
    expect(rotated.decode('usr_a', cursors.encode('usr_a', 9))).toBe(9);
    expect(cursors.decode('usr_a', rotated.encode('usr_a', 9))).toBeNull();
  });
});
