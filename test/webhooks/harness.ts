import { randomBytes } from 'node:crypto';
import { CredentialBox } from '../../src/auth/credential-box.js';
import { loadWebhookConfig, type WebhookConfig } from '../../src/config/webhooks-config.js';
import { newId } from '../../src/domain/ids.js';
import { Store } from '../../src/store/store.js';
import { createWebhooks, type Webhooks } from '../../src/webhooks/compose.js';

/** Millisecond-scale settings so retries and disabling happen within a test. */
export function fastConfig(over: Partial<WebhookConfig> = {}): WebhookConfig {
  return {
    ...loadWebhookConfig({ COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' }),
    retryScheduleMs: [0, 20, 50, 100],
    jitter: 0.2,
    timeoutMs: 2000,
    failureWindowMs: 60_000,
    pollMs: 200,
    gapGraceMs: 200,
    streamHeartbeatMs: 1000,
    ...over,
  };
}

export interface Harness {
  store: Store;
  box: CredentialBox;
  hooks: Webhooks;
  userId: string;
  emit(accountId: string | null, type: string, payload?: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

export async function harness(
  opts: { store?: Store; box?: CredentialBox; cfg?: Partial<WebhookConfig>; userId?: string; start?: boolean } = {},
): Promise<Harness> {
  const ownStore = !opts.store;
  const store = opts.store ?? (await Store.open({ dataDir: ':memory:' }));
  const box = opts.box ?? new CredentialBox(randomBytes(32));
  const userId = opts.userId ?? (await store.users.create(`${newId('usr')}@example.test`, 'h')).id;
  const hooks = createWebhooks(store, box, fastConfig(opts.cfg));
  if (opts.start !== false) hooks.start();
  return {
    store,
    box,
    hooks,
    userId,
    async emit(accountId, type, payload = {}) {
      await store.events.emit([{ userId, accountId, type, payload }]);
    },
    /** Stops this deliverer and removes the user's endpoints, so a shared store carries nothing into the next test. */
    async close() {
      await hooks.stop();
      for (const ep of await hooks.service.list(userId)) await hooks.service.remove(userId, ep.id);
      if (ownStore) await store.close();
    },
  };
}
