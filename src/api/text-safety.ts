/**
 * Text a request may carry and the store can hold. PostgreSQL refuses U+0000 in text and jsonb, and jsonb
 * refuses an unpaired UTF-16 surrogate escape: either reaching a query is a 500, so the edge refuses them.
 * Other C0 controls are refused where no valid value holds them (ids, query values, field names); free text
 * in a body may hold tab, line feed and carriage return.
 */

/** Deeper than any body of ours (3 levels); bounds every recursive walk (validation, digests, records). */
export const MAX_JSON_DEPTH = 32;

const isSurrogateHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isSurrogateLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
const hex = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `s` cannot be taken, or null. `freeText` lets tab, LF and CR through. */
export function badChar(s: string, freeText: boolean): string | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) {
      if (freeText && (c === 0x09 || c === 0x0a || c === 0x0d)) continue;
      return `a control character (${hex(c)})`;
    }
    if (isSurrogateHigh(c)) {
      if (isSurrogateLow(s.charCodeAt(i + 1))) {
        i++;
        continue;
      }
      return `an unpaired surrogate (${hex(c)})`;
    }
    if (isSurrogateLow(c)) return `an unpaired surrogate (${hex(c)})`;
  }
  return null;
}

/**
 * The first string (or field name) of a parsed JSON value that cannot be taken, named by its path. Iterative:
 * the value's depth is already bounded, but a walk should never be what overflows the stack.
 */
export function findBadString(value: unknown, root: string): string | null {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const why = badChar(v, true);
      if (why) return `${path} contains ${why}, which is not allowed`;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const why = badChar(k, false);
        if (why) return `${path} has a field name that contains ${why}, which is not allowed`;
        stack.push([child, `${path}.${k}`]);
      }
    }
  }
  return null;
}

/** Nesting depth of JSON text, counted without parsing (so a hostile body costs one linear scan). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return false;
}

/** `s` with what the store refuses replaced by U+FFFD: for records of what happened, which must never fail. */
export function storableText(s: string): string {
  if (badChar(s, true) === null) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) {
      out += '\uFFFD';
      continue;
    }
    if (isSurrogateHigh(c) && isSurrogateLow(s.charCodeAt(i + 1))) {
      out += s[i]! + s[i + 1]!;
      i++;
      continue;
    }
    out += isSurrogateHigh(c) || isSurrogateLow(c) ? '\uFFFD' : s[i]!;
  }
  return out;
}

/**
 * A JSON value the store can hold as jsonb: bad text replaced, and anything deeper than `maxDepth` cut to a
 * marker. Never throws, so recording a request cannot fail on what the request (or its answer) carried.
 */
export function storableJson(value: unknown, maxDepth = MAX_JSON_DEPTH): unknown {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return storableText(v);
    if (v === null || typeof v !== 'object') return typeof v === 'number' && !Number.isFinite(v) ? null : v;
    if (depth >= maxDepth) return '[too deeply nested]';
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(v)) out[storableText(k)] = walk(child, depth + 1);
    return out;
  };
  try {
    return walk(value, 0);
  } catch {
    return null;
  }
}
