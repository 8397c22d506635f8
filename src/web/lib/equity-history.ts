/**
 * Equity over time per account, sampled from the account list while the dashboard is open (each poll or
 * event adds a point when the value or a minute has changed). Kept for the tab's life in sessionStorage.
 */
export interface Sample { t: number; equity: number; balance: number | null }
const KEY = 'copytrade.equity';
const MAX = 1800;
let cache: Record<string, Sample[]> | null = null;
const listeners = new Set<() => void>();

function load(): Record<string, Sample[]> {
  if (cache) return cache;
  try {
    cache = JSON.parse(sessionStorage.getItem(KEY) ?? '{}') as Record<string, Sample[]>;
  } catch {
    cache = {};
  }
  return cache;
}

export function recordEquity(accounts: Array<{ id: string; equity: number | null; balance: number | null }>, now = Date.now()): void {
  const h = load();
  let changed = false;
  for (const a of accounts) {
    if (a.equity === null) continue;
    const list = (h[a.id] ??= []);
    const last = list[list.length - 1];
    if (last && last.equity === a.equity && last.balance === a.balance && now - last.t < 60_000) continue;
    list.push({ t: now, equity: a.equity, balance: a.balance });
    if (list.length > MAX) list.splice(0, list.length - MAX);
    changed = true;
  }
  if (!changed) return;
  try {
    sessionStorage.setItem(KEY, JSON.stringify(h));
  } catch {
    /* full: keep it in memory */
  }
  for (const l of listeners) l();
}

export const equityHistory = (): Record<string, Sample[]> => load();
export function onEquityChange(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}
