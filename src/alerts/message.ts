import type { AlertKind } from './alert-kinds.js';

export interface AlertMessage {
  subject: string;
  text: string;
}

/** One event as the message lists it. */
export interface AlertItem {
  kind: AlertKind;
  eventId: string;
  type: string;
  accountId: string | null;
  at: Date;
  data: Record<string, unknown>;
  /** Accounts whose events were folded into this one (a group's panic-close: one event per account). */
  accounts: number;
}

/** The first events a message lists one by one; the rest are only counted. */
export const LISTED = 5;

const hhmmss = (d: Date) => d.toISOString().slice(11, 19);
const s = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** One line for one event: what happened, where, and the broker's or the rule's words. */
export function describe(item: AlertItem): string {
  const d = item.data;
  const on = item.accountId ? ` on ${item.accountId}` : '';
  const many = item.accounts > 1 ? ` (${item.accounts} accounts)` : '';
  switch (item.kind.kind) {
    case 'copy_rejected':
      return `copy refused${on}: ${s(d.side)} ${s(d.volume)} ${s(d.symbol)}: ${s(d.code)} ${s(d.message)}`.trim();
    case 'account_disconnected':
      return `account${on} is ${s(d.after)} (was ${s(d.before)})${d.reason ? `: ${s(d.reason)}` : ''}`;
    case 'risk_triggered':
      return `risk limit${on}: ${s(d.rule ?? d.reason)}${d.action ? `, ${s(d.action)}` : ''}${d.detail ? ` (${s(d.detail)})` : ''}`;
    case 'panic_close_started':
      return `panic-close of ${s(d.scope)} ${s(d.targetId)} started${many}`;
    case 'panic_close_finished':
      return `panic-close of ${s(d.scope)} ${s(d.targetId)} ended: ${s(d.closed)} closed, ${s(d.failed)} failed, ${s(d.remaining)} remaining${many}`;
    case 'slo_breached':
      return `service level${on}: ${s(d.metric)} ${s(d.value)} against a target of ${s(d.target)} over ${s(d.windowMinutes)} min${d.detail ? ` (${s(d.detail)})` : ''}`;
    default:
      return `${item.type}${on}`;
  }
}

/**
 * One message for everything a channel gathered in a window: counts per kind in the subject, the first few
 * events listed, the rest counted. A burst of a thousand refusals is one message that says "1000 copies refused".
 */
export function composeMessage(counts: Map<AlertKind, number>, first: AlertItem[], total: number): AlertMessage {
  const parts = [...counts].map(([k, n]) => `${n} ${n === 1 ? k.one : k.many}`);
  const subject = `copytrade: ${parts.join(', ')}`;
  const lines = first.slice(0, LISTED).map((i) => `- ${hhmmss(i.at)} UTC ${describe(i)}`);
  const rest = total - Math.min(first.length, LISTED);
  if (rest > 0) lines.push(`- and ${rest} more`);
  const text = [
    `${parts.join(', ')}.`,
    '',
    ...lines,
    '',
    'The dashboard shows each one (Copy log, Events). Choose what alerts under Alerts.',
  ].join('\n');
  return { subject, text };
}

export const TEST_MESSAGE: AlertMessage = {
  subject: 'copytrade: test message',
  text: 'This is a test from copytrade: alerts sent to this channel will arrive like this one.',
};
