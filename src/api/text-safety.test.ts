import { describe, expect, it } from 'vitest';
import { badChar, findBadString, jsonDepthExceeds, storableJson, storableText } from './text-safety.js';

describe('text the store can hold', () => {
  it('refuses U+0000, control characters and unpaired surrogates; free text keeps tab and line breaks', () => {
    expect(badChar('acc_1', false)).toBeNull();
    expect(badChar('a\u0000b', true)).toMatch(/control character \(U\+0000\)/);
    expect(badChar('a\u007fb', false)).toMatch(/U\+007F/);
    expect(badChar('line\nbreak\tand\r', true)).toBeNull();
    expect(badChar('line\nbreak', false)).toMatch(/U\+000A/);
    expect(badChar('x\ud800y', true)).toMatch(/unpaired surrogate \(U\+D800\)/);
    expect(badChar('x\udc00', true)).toMatch(/unpaired surrogate/);
    expect(badChar('emoji \ud83d\ude00 ok, é, 中', true)).toBeNull();
  });

  it('names the first bad string or field name of a parsed body by its path', () => {
    expect(findBadString({ a: ['ok', { b: 'x\u0000' }] }, 'body')).toBe(
      'body.a[1].b contains a control character (U+0000), which is not allowed',
    );
    expect(findBadString({ ['k\u0001']: 1 }, 'body')).toMatch(
      /^body has a field name that contains a control character \(U\+0001\)/,
    );
    expect(findBadString({ a: 1, b: [true, null, 'fine\n'] }, 'body')).toBeNull();
  });

  it('measures nesting without parsing, ignoring brackets inside strings', () => {
    expect(jsonDepthExceeds('{"a":[[1]]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":[[[1]]]}', 3)).toBe(true);
    expect(jsonDepthExceeds('{"a":"[[[[[[\\"[[[["}', 1)).toBe(false);
    expect(jsonDepthExceeds('['.repeat(1_000_000), 32)).toBe(true);
  });

  it('makes any value storable: bad text replaced, depth cut, never a throw', () => {
    expect(storableText('a\u0000b\ud800')).toBe('a\uFFFDb\uFFFD');
    expect(storableText('ok \ud83d\ude00')).toBe('ok \ud83d\ude00');
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const cut = JSON.stringify(storableJson({ deep }));
    expect(cut).toContain('[too deeply nested]');
    expect(storableJson({ ['k\u0000']: 'v\u0000', n: Number.NaN })).toEqual({ 'k\uFFFD': 'v\uFFFD', n: null });
  });
});
