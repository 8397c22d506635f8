import type { CopyRule, CopyRulePatch } from '../api/types';

type Overrides = NonNullable<CopyRulePatch['symbolOverrides']>;
const DEC = /^[0-9]+(\.[0-9]+)?$/;
const KEYS = ['multiplier', 'volume', 'maxVolume', 'maxSlippagePoints'] as const;

/** The rule's per-symbol overrides as the form's text: one symbol a line, `XAUUSD off` or `XAUUSD multiplier=0.5 maxVolume=2`. */
export function overridesToText(o: CopyRule['symbolOverrides'] | undefined): string {
  return Object.entries(o ?? {})
    .map(([sym, x]) =>
      x.copy === false
        ? `${sym} off`
        : [sym, ...KEYS.filter((k) => x[k] !== undefined).map((k) => `${k}=${x[k]}`)].join(' '),
    )
    .join('\n');
}

/** The text back as overrides, or the first line that cannot be read. */
export function textToOverrides(text: string): { overrides: Overrides; error?: string } {
  const overrides: Overrides = {};
  for (const [i, line] of text.split('\n').entries()) {
    const [sym, ...parts] = line.trim().split(/[\s,]+/);
    if (!sym) continue;
    const bad = { overrides, error: `line ${i + 1}: write SYMBOL off, or SYMBOL multiplier=0.5 maxVolume=2` };
    if (parts.length === 1 && parts[0] === 'off') {
      overrides[sym] = { copy: false };
      continue;
    }
    const o: Record<string, string> = {};
    for (const p of parts) {
      const [k, v] = p.split('=');
      if (!k || !v || !(KEYS as readonly string[]).includes(k) || !DEC.test(v) || Number(v) <= 0) return bad;
      o[k] = v;
    }
    if (parts.length === 0 || (o.multiplier && o.volume)) return bad;
    overrides[sym] = o;
  }
  return { overrides };
}
