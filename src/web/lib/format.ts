/** Formatting for people: money, volumes, prices, times, latencies. Pure functions (unit-tested). */

export function money(v: number | null | undefined, currency?: string | null): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  const s = v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return currency ? `${s} ${currency}` : s;
}

/** A decimal without float noise: 0.1 + 0.2 shows as 0.3, at most `digits` decimals, no trailing zeros. */
export function num(v: number | null | undefined, digits = 5): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  return String(Number(v.toFixed(digits)));
}

export const signed = (v: number | null | undefined, digits = 5): string =>
  v === null || v === undefined ? '–' : v > 0 ? `+${num(v, digits)}` : num(v, digits);

/** The copy latency of a ledger row in ms: a number, or the sum of the measured phases {plan, record, send, ack}. */
export function latencyTotal(l: unknown): number | null {
  if (typeof l === 'number' && Number.isFinite(l)) return l;
  if (l && typeof l === 'object') {
    const vals = Object.values(l as Record<string, unknown>).filter(
      (x): x is number => typeof x === 'number' && Number.isFinite(x),
    );
    return vals.length ? vals.reduce((a, b) => a + b, 0) : null;
  }
  return null;
}

export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined) return '–';
  if (v < 10) return `${v.toFixed(1)} ms`;
  if (v < 1000) return `${Math.round(v)} ms`;
  return `${(v / 1000).toFixed(2)} s`;
}

/** The phases of a latency object, for a tooltip: "plan 5.8 ms, record 27 ms, ...". */
export function latencyPhases(l: unknown): string {
  if (!l || typeof l !== 'object') return '';
  return Object.entries(l as Record<string, unknown>)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => `${k} ${ms(v as number)}`)
    .join(', ');
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString('en-GB', {
    year: 'numeric',
    month: 'short',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (Number.isNaN(s)) return '–';
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export { platformName } from '../../client/platform-names';

export const shortId = (id: string, n = 6): string =>
  id.length > n + 4 ? `${id.slice(0, id.indexOf('_') + 1)}…${id.slice(-n)}` : id;

/** Tone of a status word for its badge. */
export function tone(s: string | null | undefined): 'good' | 'warn' | 'bad' | 'muted' | 'info' {
  switch (s) {
    case 'ok':
    case 'connected':
    case 'confirmed':
    case 'accepted':
    case 'closed':
    case 'active':
      return 'good';
    case 'degraded':
    case 'paused':
    case 'planned':
    case 'sent':
    case 'pending':
    case 'expiring':
    case 'skipped':
    case 'unresolved':
      return 'warn';
    case 'down':
    case 'disconnected':
    case 'reconnect_required':
    case 'disabled':
    case 'unverified':
    case 'locked':
    case 'rejected':
    case 'denied':
    case 'failed':
    case 'revoked':
    case 'expired':
      return 'bad';
    case 'master':
      return 'info';
    default:
      return 'muted';
  }
}
