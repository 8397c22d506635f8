import { describe, expect, it } from 'vitest';
import { MAX_NAMED_TEXTS, statementName } from './statement-names.js';

describe('statementName', () => {
  it('gives a text one name for good and another text another name', () => {
    const a = statementName('select 1 where $1::text = $2::text');
    const b = statementName('select 2 where $1::text = $2::text');
    expect(a).toMatch(/^ct_stmt_\d+$/);
    expect(b).toMatch(/^ct_stmt_\d+$/);
    expect(a).not.toBe(b);
    expect(statementName('select 1 where $1::text = $2::text')).toBe(a);
  });

  it('names no new text past its bound, and keeps the names given', () => {
    const first = statementName('select 3');
    for (let i = 0; i < MAX_NAMED_TEXTS; i++) statementName(`select ${i} + 1000`);
    expect(statementName('select a text never seen before')).toBeUndefined();
    expect(statementName('select 3')).toBe(first);
  });
});
