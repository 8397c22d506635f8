import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CredentialBox } from '../../src/auth/credential-box.js';
import { createAlerts, type Alerts } from '../../src/alerts/compose.js';
import { loadAlertsConfig } from '../../src/config/alerts-config.js';
import { newId } from '../../src/domain/ids.js';
import { EventFeed } from '../../src/events/feed.js';
import { Store } from '../../src/store/store.js';
import type { SmtpSink, TelegramStub } from './servers.js';

export const SMTP_USER = 'alerts@relay.test';
export const SMTP_PASSWORD = 'relay password 7f3a';
/** A token of the shape BotFather gives (never a real one). */
export const botToken = (n = 1) => `12345678${n}:AAH${'x'.repeat(30)}${randomBytes(4).toString('hex')}`;

/** The operator's settings as environment variables: SMTP password from a file, the Bot API on the stub. */
export function alertEnv(smtp: SmtpSink, tg: TelegramStub): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'ct-alerts-'));
  const pwFile = join(dir, 'smtp-password');
  writeFileSync(pwFile, `${SMTP_PASSWORD}\n`, { mode: 0o600 });
  return {
    COPYTRADE_SMTP_HOST: '127.0.0.1',
    COPYTRADE_SMTP_PORT: String(smtp.port),
    COPYTRADE_SMTP_USER: SMTP_USER,
    COPYTRADE_SMTP_PASSWORD_FILE: pwFile,
    COPYTRADE_SMTP_FROM: 'copytrade <alerts@relay.test>',
    COPYTRADE_TELEGRAM_API_URL: tg.url,
    COPYTRADE_ALERTS_TIMEOUT: '5s',
  };
}

export interface AlertWorld {
  store: Store;
  alerts: Alerts;
  userId: string;
  /** The injected clock: the dispatcher's now. */
  clock: { now: number };
  emit(type: string, payload: Record<string, unknown>, accountId?: string | null): Promise<void>;
  /** Many events in one commit (a fan-out's refusals land in batches). */
  emitMany(type: string, payloads: Array<Record<string, unknown>>): Promise<void>;
  close(): Promise<void>;
}

/** The store, the webhooks' event feed and the alerts on an injected clock; the test drives `alerts.dispatcher.tick()`. */
export async function alertWorld(
  env: Record<string, string>,
  over: Record<string, string> = {},
  databaseUrl?: string,
): Promise<AlertWorld> {
  const store = await Store.open(databaseUrl ? { dataDir: ':memory:', databaseUrl } : { dataDir: ':memory:' });
  const box = new CredentialBox(randomBytes(32));
  const feed = new EventFeed(store.events, { gapGraceMs: 0 });
  const clock = { now: Date.parse('2026-03-02T09:00:00Z') };
  const cfg = loadAlertsConfig({
    COPYTRADE_ALERTS_WINDOW: '60s',
    COPYTRADE_ALERTS_GATHER: '5s',
    COPYTRADE_ALERTS_RETRY_SCHEDULE: '30s,2m',
    ...env,
    ...over,
  });
  const alerts = createAlerts(store.alerts, feed, box, cfg, { clock: () => clock.now });
  const userId = (await store.users.create(`${newId('usr')}@example.test`, 'h')).id;
  return {
    store,
    alerts,
    userId,
    clock,
    async emit(type, payload, accountId = 'acc_demo_slave_1') {
      await store.events.emit([{ userId, accountId, type, payload }]);
    },
    async emitMany(type, payloads) {
      await store.events.emit(
        payloads.map((payload, i) => ({ userId, accountId: `acc_slave_${i % 20}`, type, payload })),
      );
    },
    async close() {
      await alerts.stop();
      await store.close();
    },
  };
}
