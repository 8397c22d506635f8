import type { Decimal } from '../decimal.js';
import type { FollowedTrade } from './follower.js';

/** Closed trades as CSV (RFC 4180, CRLF), one row per trade, money in the account currency. */
export const TRADE_CSV_COLUMNS = [
  'close_time',
  'open_time',
  'position_id',
  'symbol',
  'side',
  'volume',
  'open_price',
  'close_price',
  'profit',
  'swap',
  'commission',
  'net_profit',
  'profit_source',
  'fully_closed',
  'master_account_id',
  'master_position_id',
  'master_profit',
  'master_scaled_profit',
] as const;

export function tradesCsv(trades: readonly FollowedTrade[]): string {
  const rows = trades.map((t) => [
    t.closeTime,
    t.openTime ?? '',
    text(t.positionId),
    text(t.symbol),
    t.side,
    num(t.volume),
    num(t.openPrice),
    num(t.closePrice),
    num(t.profit),
    num(t.swap),
    num(t.commission),
    num(t.netProfit),
    t.profitSource,
    String(t.fullyClosed),
    text(t.master?.accountId ?? ''),
    text(t.master?.positionId ?? ''),
    num(t.master?.profit ?? null),
    num(t.master?.scaledProfit ?? null),
  ]);
  return `${[TRADE_CSV_COLUMNS as readonly string[], ...rows].map((r) => r.map(quote).join(',')).join('\r\n')}\r\n`;
}

const num = (d: Decimal | null) => (d === null ? '' : d.toString());

/** A broker's text that a spreadsheet would run as a formula is kept as text (leading apostrophe). */
const text = (s: string) => (/^[=+\-@\t\r]/.test(s) ? `'${s}` : s);

const quote = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
