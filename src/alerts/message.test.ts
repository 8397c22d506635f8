import { describe, expect, it } from 'vitest';
import { ALERT_KINDS, alertKindOf, enabledKinds } from './alert-kinds.js';
import { composeMessage, describe as describeItem, type AlertItem } from './message.js';
import { maskSecret, scrub } from './send-result.js';

const all = enabledKinds([]);
const kind = (k: string) => ALERT_KINDS.find((x) => x.kind === k)!;

describe('alert kinds', () => {
  it('takes a disconnect, not a pause, from account.status_changed', () => {
    expect(alertKindOf('account.status_changed', { after: 'disconnected' }, all)?.kind).toBe('account_disconnected');
    expect(alertKindOf('account.status_changed', { after: 'reconnect_required' }, all)?.kind).toBe(
      'account_disconnected',
    );
    expect(alertKindOf('account.status_changed', { after: 'paused' }, all)).toBeNull();
    expect(alertKindOf('copy.confirmed', {}, all)).toBeNull();
    expect(alertKindOf('account.circuit_breaker_tripped', {}, all)?.kind).toBe('risk_triggered');
    expect(alertKindOf('slo.breached', { metric: 'latency_p99' }, all)?.kind).toBe('slo_breached');
    expect(alertKindOf('slo.recovered', { metric: 'latency_p99' }, all)).toBeNull();
  });

  it("says which service level broke, its value and the group's target", () => {
    const line = describeItem({
      kind: kind('slo_breached'),
      eventId: 'evt_slo',
      type: 'slo.breached',
      accountId: 'acc_s',
      at: new Date(Date.UTC(2026, 0, 2, 9, 0, 0)),
      data: { metric: 'latency_p99', value: 1520, target: 1000, windowMinutes: 10, detail: '12 copies' },
      accounts: 1,
    });
    expect(line).toBe('service level on acc_s: latency_p99 1520 against a target of 1000 over 10 min (12 copies)');
  });

  it('is on unless a rule turns it off', () => {
    const on = enabledKinds([
      { kind: 'copy_rejected', enabled: false },
      { kind: 'risk_triggered', enabled: true },
    ]);
    expect(on.has('copy_rejected')).toBe(false);
    expect(on.has('risk_triggered')).toBe(true);
    expect(on.has('panic_close_finished')).toBe(true);
    expect(alertKindOf('copy.rejected', {}, on)).toBeNull();
  });
});

describe('grouped message', () => {
  const item = (i: number): AlertItem => ({
    kind: kind('copy_rejected'),
    eventId: `evt_${i}`,
    type: 'copy.rejected',
    accountId: `acc_${i}`,
    at: new Date(Date.UTC(2026, 0, 2, 9, 0, i)),
    data: { side: 'sell', volume: '1.5', symbol: 'XAUUSD', code: 'MARKET_CLOSED', message: 'market closed' },
    accounts: 1,
  });

  it('counts each kind in the subject, lists the first five and counts the rest', () => {
    const counts = new Map([
      [kind('copy_rejected'), 998],
      [kind('account_disconnected'), 1],
    ]);
    const m = composeMessage(
      counts,
      Array.from({ length: 5 }, (_, i) => item(i)),
      999,
    );
    expect(m.subject).toBe('copytrade: 998 copies refused, 1 account disconnected');
    expect(m.text).toContain('- 09:00:00 UTC copy refused on acc_0: sell 1.5 XAUUSD: MARKET_CLOSED market closed');
    expect(m.text.match(/^- \d/gm)).toHaveLength(5);
    expect(m.text).toContain('- and 994 more');
  });

  it('has no "more" line when everything is listed', () => {
    const m = composeMessage(new Map([[kind('copy_rejected'), 1]]), [item(1)], 1);
    expect(m.subject).toBe('copytrade: 1 copy refused');
    expect(m.text).not.toContain('more');
  });
});

describe('secrets in answers', () => {
  it('are replaced wherever they appear, and masked to their last 4 characters', () => {
    const token = '123456789:AAHsecretsecretsecretsecretsecret';
    expect(scrub(`POST /bot${token}/sendMessage failed`, [token])).toBe('POST /bot***/sendMessage failed');
    expect(scrub(null, [token])).toBeNull();
    expect(scrub('x'.repeat(600), [])).toHaveLength(503);
    expect(maskSecret(token)).toBe('...cret');
  });
});
