import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli-run.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { alertEnv, botToken, SMTP_PASSWORD, SMTP_USER } from './harness.js';
import { SmtpSink, TelegramStub } from './servers.js';

const METRICS_TOKEN = 'metrics-token-for-alerts-test';

/** The alert routes over HTTP on the whole service, its SMTP server and Bot API on loopback. */
describe('alert routes', () => {
  let svc: TestService;
  let smtp: SmtpSink;
  let tg: TelegramStub;
  let key: string;
  let userId: string;
  let otherKey: string;
  const token = botToken(7);

  beforeAll(async () => {
    smtp = await new SmtpSink(SMTP_USER, SMTP_PASSWORD).up();
    tg = await new TelegramStub().up();
    // No gather delay: the service's own dispatcher sends as soon as the event is visible.
    svc = await startTestService({
      env: { ...alertEnv(smtp, tg), COPYTRADE_ALERTS_GATHER: '0', COPYTRADE_METRICS_TOKEN: METRICS_TOKEN },
    });
    const u = await svc.deps.auth.createUser('alerts@example.test', 'correct horse battery');
    userId = u.id;
    key = (await svc.deps.auth.createApiKey(u.id, 'alerts')).apiKey;
    const o = await svc.deps.auth.createUser('other-alerts@example.test', 'correct horse battery');
    otherKey = (await svc.deps.auth.createApiKey(o.id, 'other')).apiKey;
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await smtp?.down();
    await tg?.down();
  });

  const create = (body: unknown, k = key) => svc.call('POST', '/v1/alert-channels', { token: k, body });

  it('gives clear 400s for bad input', async () => {
    const badEmail = await create({ kind: 'email', email: 'not an address' });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.error).toBe('email "not an address" is not an email address (name@example.com)');
    expect((await create({ kind: 'email' })).body.error).toBe('email is required for an email channel');
    const noChat = await create({ kind: 'telegram', botToken: token });
    expect(noChat.status).toBe(400);
    expect(noChat.body.error).toMatch(/^chatId is required for a telegram channel/);
    const badToken = await create({ kind: 'telegram', botToken: 'abc', chatId: '42' });
    expect(badToken.status).toBe(400);
    expect(badToken.body.error).toMatch(/^botToken does not look like a Telegram bot token/);
    expect((await create({ kind: 'telegram', botToken: token, chatId: 'my chat' })).status).toBe(400);
    expect((await create({ kind: 'sms', email: 'a@example.test' })).status).toBe(400);
    const rules = await svc.call('PUT', '/v1/alert-rules', {
      token: key,
      body: { rules: [{ kind: 'moon', enabled: true }] },
    });
    expect(rules.status).toBe(400);
    expect(rules.body.error).toMatch(/^unknown alert kind moon; known: account_disconnected, copy_rejected/);
  });

  it('tests each channel, masks the bot token everywhere, and alerts on events', async () => {
    const e = await create({ kind: 'email', email: 'desk@example.test', name: 'desk' });
    expect(e.status).toBe(201);
    const t = await create({ kind: 'telegram', botToken: token, chatId: '-100200300' });
    expect(t.status).toBe(201);
    expect(t.body).toMatchObject({ kind: 'telegram', chatId: '-100200300', botTokenMasked: `...${token.slice(-4)}` });
    const list = await svc.call('GET', '/v1/alert-channels', { token: key });
    expect(list.body.channels).toHaveLength(2);
    expect(JSON.stringify(list.body)).not.toContain(token.split(':')[1]);

    const te = await svc.call('POST', `/v1/alert-channels/${e.body.id}/test`, { token: key });
    expect(te.body).toMatchObject({ ok: true, status: 250, trigger: 'test', attempt: 0 });
    expect(smtp.to('desk@example.test').map((m) => m.subject)).toEqual(['copytrade: test message']);
    const tt = await svc.call('POST', `/v1/alert-channels/${t.body.id}/test`, { token: key });
    expect(tt.body).toMatchObject({ ok: true, status: 200, trigger: 'test' });
    expect(tg.to('-100200300')).toHaveLength(1);
    expect(tg.to('-100200300')[0]!.token).toBe(token);

    // An event of the catalogue, as the engine writes it: both channels get it, grouped by the dispatcher.
    await svc.store.events.emit([
      {
        userId,
        accountId: 'acc_x',
        type: 'panic_close.started',
        payload: { scope: 'account', targetId: 'acc_x' },
      },
    ]);
    await vi.waitFor(() => expect(smtp.to('desk@example.test')).toHaveLength(2), { timeout: 10_000, interval: 50 });
    await vi.waitFor(() => expect(tg.to('-100200300')).toHaveLength(2), { timeout: 10_000, interval: 50 });
    expect(smtp.to('desk@example.test')[1]!.subject).toBe('copytrade: 1 panic-close started');
    await vi.waitFor(async () => {
      const metrics = await (
        await fetch(`${svc.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
      ).text();
      expect(metrics).toMatch(/^copytrade_alert_sends_total\{result="sent"\} 2$/m);
    });
    const d = await svc.call('GET', `/v1/alert-channels/${t.body.id}/deliveries`, { token: key });
    expect(d.body.deliveries.map((x: { trigger: string; eventCount: number }) => [x.trigger, x.eventCount])).toEqual([
      ['scheduled', 1],
      ['test', 0],
    ]);

    // A failing token: the answer names the status, never the token.
    const badToken = botToken(9);
    tg.fail.set(badToken, { status: 401, description: 'Unauthorized' });
    const p = await svc.call('PATCH', `/v1/alert-channels/${t.body.id}`, { token: key, body: { botToken: badToken } });
    expect(p.body.botTokenMasked).toBe(`...${badToken.slice(-4)}`);
    const failed = await svc.call('POST', `/v1/alert-channels/${t.body.id}/test`, { token: key });
    expect(failed.body).toMatchObject({ ok: false, status: 401, error: 'Telegram answered 401: Unauthorized' });
    for (const secret of [token, badToken, SMTP_PASSWORD]) {
      expect(svc.logs.join('\n')).not.toContain(secret);
      expect(JSON.stringify(failed.body)).not.toContain(secret);
    }
    // At rest the token is sealed.
    const row = await svc.store.alerts.owned(userId, t.body.id);
    expect(row!.secretEnc).toMatch(/^v2\./);
    expect(row!.secretEnc).not.toContain(badToken);
  });

  it("another user's channel id is the same 404 as an unknown one", async () => {
    const mine = await create({ kind: 'email', email: 'mine@example.test' });
    const unknown = 'alc_0000000000000000000000000';
    for (const [m, suffix, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { name: 'x' }],
      ['POST', '/test', undefined],
      ['GET', '/deliveries', undefined],
      ['DELETE', '', undefined],
    ] as const) {
      const foreign = await svc.call(m, `/v1/alert-channels/${mine.body.id}${suffix}`, { token: otherKey, body });
      const none = await svc.call(m, `/v1/alert-channels/${unknown}${suffix}`, { token: otherKey, body });
      expect(foreign.status, `${m} ${suffix}`).toBe(404);
      expect(foreign.body.error).toBe(none.body.error);
      expect(foreign.body.code).toBe(none.body.code);
    }
    expect((await svc.call('GET', `/v1/alert-channels/${mine.body.id}`, { token: key })).status).toBe(200);
  });

  it('copytrade alerts: add channels (the bot token from a file), test, rules, deliveries', {
    timeout: 60_000,
  }, async () => {
    const env = { COPYTRADE_URL: svc.v1BaseUrl, COPYTRADE_API_KEY: key };
    const cli = (...args: string[]) => runCli(args, env);
    const added = await cli('alerts', 'add-email', 'cli@example.test', '--json');
    expect(added.code, added.stderr).toBe(0);
    const id = JSON.parse(added.stdout).id as string;
    const tokenFile = join(mkdtempSync(join(tmpdir(), 'ct-alerts-cli-')), 'bot-token');
    const cliToken = botToken(3);
    writeFileSync(tokenFile, `${cliToken}\n`, { mode: 0o600 });
    const tgAdded = await cli('alerts', 'add-telegram', '--chat-id', '555', '--bot-token-file', tokenFile);
    expect(tgAdded.code, tgAdded.stderr).toBe(0);
    expect(tgAdded.stdout).toContain(`chat 555 (token ...${cliToken.slice(-4)})`);
    expect(tgAdded.stdout).not.toContain(cliToken);
    const noToken = await cli('alerts', 'add-telegram', '--chat-id', '555');
    expect(noToken.code).not.toBe(0);
    expect(noToken.stderr).toContain('--bot-token-file');

    const test = await cli('alerts', 'test', id);
    expect(test.code, test.stderr).toBe(0);
    expect(test.stdout).toBe('test message: sent (250)\n');
    expect(smtp.to('cli@example.test').map((m) => m.subject)).toEqual(['copytrade: test message']);
    const list = await cli('alerts', 'list');
    expect(list.stdout).toContain('cli@example.test');
    const rules = await cli('alerts', 'rules', '--off', 'risk_triggered');
    expect(rules.stdout).toMatch(/risk_triggered\s+off/);
    const deliveries = await cli('alerts', 'deliveries', id);
    expect(deliveries.stdout).toContain('copytrade: test message (test)');
    expect((await cli('alerts', 'remove', id)).code).toBe(0);
    const gone = await cli('alerts', 'test', id);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('alert channel not found');
  });
});
