import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { alertEnv, alertWorld, botToken, SMTP_PASSWORD, SMTP_USER, type AlertWorld } from './harness.js';
import { SmtpSink, TelegramStub } from './servers.js';
import { storeCases } from '../engine/copy-harness.js';

const stores = await storeCases();

const rejected = (i: number) => ({
  tradeId: `trd_${i}`,
  intentId: `int_${i}`,
  symbol: 'EURUSD',
  side: 'buy',
  volume: '0.10',
  code: 'NO_MONEY',
  message: 'not enough money',
});

/**
 * Alerts through a real SMTP server and a Bot API stub, both on loopback, driven by an injected clock: what alerts,
 * how a burst is grouped into one message per channel per window, and how a failing channel retries.
 */
describe.each(stores)('alerts on each channel, grouped and retried (%s store)', (_name, makeDb) => {
  let smtp: SmtpSink;
  let tg: TelegramStub;
  let env: Record<string, string>;
  let w: AlertWorld;
  let token: string;
  let drop: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    smtp = await new SmtpSink(SMTP_USER, SMTP_PASSWORD).up();
    tg = await new TelegramStub().up();
    env = alertEnv(smtp, tg);
  });
  afterAll(async () => {
    await smtp?.down();
    await tg?.down();
  });
  beforeEach(async () => {
    const d = await makeDb();
    drop = d.drop;
    w = await alertWorld(env, {}, d.databaseUrl);
    token = botToken();
  });
  afterEach(async () => {
    await w?.close();
    await drop();
  });

  async function channels(email: string, chatId: string) {
    const e = await w.alerts.service.create(w.userId, { kind: 'email', email });
    const t = await w.alerts.service.create(w.userId, { kind: 'telegram', botToken: token, chatId });
    return { e, t };
  }
  /** A pass once the gather delay has passed. */
  async function passAfter(ms: number) {
    w.clock.now += ms;
    await w.alerts.dispatcher.tick();
  }

  it('a disconnect, a refused copy and a panic-close each produce a message on each channel', async () => {
    await channels('trader1@example.test', '1001');
    await w.emit('account.status_changed', { before: 'connected', after: 'disconnected', reason: 'socket closed' });
    // Not alerting: a confirmed copy, an account paused by its user.
    await w.emit('copy.confirmed', {
      ...rejected(0),
      positionId: 'p',
      orderId: null,
      fillPrice: '1.1',
      filledVolume: '0.1',
      slippage: null,
    });
    await w.emit('account.status_changed', { before: 'connected', after: 'paused' });
    await w.alerts.dispatcher.tick();
    expect(smtp.to('trader1@example.test')).toHaveLength(0); // the gather delay has not passed
    await passAfter(5_000);
    let mails = smtp.to('trader1@example.test');
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('copytrade: 1 account disconnected');
    expect(mails[0]!.body).toContain('is disconnected (was connected): socket closed');
    expect(mails[0]!.from).toBe('alerts@relay.test');
    let calls = tg.to('1001');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.token).toBe(token);
    expect(calls[0]!.text).toMatch(/^copytrade: 1 account disconnected\n/);

    await passAfter(60_000);
    await w.emit('copy.rejected', rejected(1));
    await w.alerts.dispatcher.tick();
    await passAfter(5_000);
    // A group's panic-close writes one event per account of the group: the trader started one panic-close.
    for (const acc of ['acc_a', 'acc_b', 'acc_c']) {
      await w.emit('panic_close.started', { scope: 'group', targetId: 'grp_1' }, acc);
      await w.emit(
        'panic_close.finished',
        { scope: 'group', targetId: 'grp_1', closed: 2, failed: 0, remaining: 0 },
        acc,
      );
    }
    await w.alerts.dispatcher.tick();
    expect(smtp.to('trader1@example.test')).toHaveLength(2);
    await passAfter(60_000);
    mails = smtp.to('trader1@example.test');
    calls = tg.to('1001');
    // The refused copy went at once (its window had closed); the panic-close waited for the next window.
    expect(mails.map((m) => m.subject)).toEqual([
      'copytrade: 1 account disconnected',
      'copytrade: 1 copy refused',
      'copytrade: 1 panic-close started, 1 panic-close ended',
    ]);
    expect(calls.map((c) => c.text.split('\n')[0])).toEqual(mails.map((m) => m.subject));
    expect(calls[1]!.text).toContain('copy refused on acc_demo_slave_1: buy 0.10 EURUSD: NO_MONEY not enough money');
    expect(calls[2]!.text).toContain('panic-close of group grp_1 started (3 accounts)');
    expect(calls[2]!.text).toContain('panic-close of group grp_1 ended: 6 closed, 0 failed, 0 remaining (3 accounts)');
    // The SMTP server saw the operator's login, the password read from its file.
    expect(smtp.logins.at(-1)).toEqual({ user: SMTP_USER, pass: SMTP_PASSWORD });
  });

  it('a burst of 200 refused copies is one message per channel per window', async () => {
    const { e, t } = await channels('burst@example.test', '1002');
    await w.emitMany(
      'copy.rejected',
      Array.from({ length: 200 }, (_, i) => rejected(i)),
    );
    await w.alerts.dispatcher.tick();
    await passAfter(5_000);
    expect(smtp.to('burst@example.test')).toHaveLength(1);
    expect(tg.to('1002')).toHaveLength(1);
    expect(smtp.to('burst@example.test')[0]!.subject).toBe('copytrade: 200 copies refused');
    const text = tg.to('1002')[0]!.text;
    expect(text.match(/^- .*copy refused on/gm)).toHaveLength(5);
    expect(text).toContain('- and 195 more');

    // More of them inside the window: held back, then one message when it closes.
    await w.emitMany(
      'copy.rejected',
      Array.from({ length: 30 }, (_, i) => rejected(1000 + i)),
    );
    for (let s = 0; s < 50; s += 10) await passAfter(10_000);
    expect(smtp.to('burst@example.test')).toHaveLength(1);
    expect(tg.to('1002')).toHaveLength(1);
    await passAfter(10_000);
    expect(smtp.to('burst@example.test').map((m) => m.subject)).toEqual([
      'copytrade: 200 copies refused',
      'copytrade: 30 copies refused',
    ]);
    expect(tg.to('1002')).toHaveLength(2);
    for (const ch of [e, t]) {
      const rows = await w.store.alerts.deliveries(ch.id, 10);
      expect(rows.map((r) => [r.ok, r.eventCount, r.attempt])).toEqual([
        [true, 30, 1],
        [true, 200, 1],
      ]);
    }
  });

  it('a kind turned off does not alert', async () => {
    await channels('rules@example.test', '1003');
    await w.alerts.service.setRules(w.userId, [{ kind: 'copy_rejected', enabled: false }]);
    await w.emit('copy.rejected', rejected(1));
    await w.emit('risk.triggered', { rule: 'daily_loss', action: 'paused' });
    await w.alerts.dispatcher.tick();
    await passAfter(5_000);
    expect(smtp.to('rules@example.test').map((m) => m.subject)).toEqual(['copytrade: 1 risk limit tripped']);
  });

  it('a failing channel records each failed attempt, retries on its schedule, and the others are not held up', async () => {
    await w.alerts.service.create(w.userId, { kind: 'email', email: 'fine@example.test' });
    const bad = await w.alerts.service.create(w.userId, { kind: 'email', email: 'full@example.test' });
    const tgBad = await w.alerts.service.create(w.userId, { kind: 'telegram', botToken: token, chatId: '1004' });
    smtp.refuse.add('full@example.test');
    tg.fail.set(token, { status: 502, description: 'Bad Gateway' });
    await w.emit('copy.rejected', rejected(1));
    await w.alerts.dispatcher.tick();
    await passAfter(5_000);
    expect(smtp.to('fine@example.test')).toHaveLength(1);

    const [first] = await w.store.alerts.deliveries(bad.id, 10);
    expect(first).toMatchObject({ ok: false, attempt: 1, status: 550, eventCount: 1 });
    expect(first!.error).toContain('550');
    const [tgFirst] = await w.store.alerts.deliveries(tgBad.id, 10);
    expect(tgFirst).toMatchObject({ ok: false, attempt: 1, status: 502 });
    expect(tgFirst!.error).toBe('Telegram answered 502: Bad Gateway');
    // The next try waits for its time on the schedule (30 s, +-20 %).
    const wait = tgFirst!.nextAttemptAt!.getTime() - w.clock.now;
    expect(wait).toBeGreaterThanOrEqual(24_000);
    expect(wait).toBeLessThanOrEqual(36_000);
    await passAfter(10_000);
    expect(await w.store.alerts.deliveries(tgBad.id, 10)).toHaveLength(1);

    // A second failure; then the bot API answers again and the same message goes, with what came meanwhile.
    await passAfter(30_000);
    expect((await w.store.alerts.deliveries(tgBad.id, 10)).map((r) => [r.attempt, r.ok])).toEqual([
      [2, false],
      [1, false],
    ]);
    tg.fail.delete(token);
    await w.emit('copy.rejected', rejected(2));
    await passAfter(150_000);
    expect((await w.store.alerts.deliveries(tgBad.id, 10)).map((r) => [r.attempt, r.ok, r.eventCount])).toEqual([
      [3, true, 2],
      [2, false, 1],
      [1, false, 1],
    ]);
    expect(tg.to('1004')[0]!.text).toMatch(/^copytrade: 2 copies refused/);
    // The refused mailbox used its retries and was given up: the row says so, the channel goes on.
    const badRows = await w.store.alerts.deliveries(bad.id, 10);
    expect(badRows.map((r) => [r.attempt, r.ok])).toEqual([
      [3, false],
      [2, false],
      [1, false],
    ]);
    expect(badRows[0]!.error).toContain('given up after 3 attempts');
    const after = await w.alerts.service.get(w.userId, bad.id);
    expect(after).toMatchObject({ failures: 0, nextAttemptAt: null });
  });
});
