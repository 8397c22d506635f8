import type { Logger } from 'pino';
import type { CredentialBox } from '../auth/credential-box.js';
import type { WebhookConfig } from '../config/webhooks-config.js';
import { EventFeed } from '../events/feed.js';
import type { Store } from '../store/store.js';
import { WebhookDeliverer } from './deliverer.js';
import { WebhookService } from './endpoint-service.js';
import { WebhookSender } from './sender.js';
import { OwnReceivers } from './target-guard.js';
import type { WebhookRepo } from '../store/repos/webhooks.js';
import type { PostResult } from './http-post.js';

export interface Webhooks {
  feed: EventFeed;
  service: WebhookService;
  deliverer: WebhookDeliverer;
  repo: WebhookRepo;
  start(): void;
  stop(): Promise<void>;
}

/** Events and webhooks as main.ts (and tests) build them: one feed shared by the deliverer and the stream. */
export function createWebhooks(
  store: Store,
  box: CredentialBox,
  cfg: WebhookConfig,
  logger: Logger | false = false,
  onAttempt?: (result: PostResult) => void,
): Webhooks {
  const feed = new EventFeed(store.events, { gapGraceMs: cfg.gapGraceMs });
  const repo = store.webhooks;
  // Private targets: all when the operator allows them, else only the service's own receivers (the demo's).
  const own = new OwnReceivers();
  const allowPrivateTargets = cfg.allowPrivateTargets || ((url: URL) => own.has(url));
  const sender = new WebhookSender(box, { timeoutMs: cfg.timeoutMs, allowPrivateTargets });
  const deliverer = new WebhookDeliverer(repo, feed, sender, {
    scheduleMs: cfg.retryScheduleMs,
    jitter: cfg.jitter,
    maxRetryAfterMs: cfg.maxRetryAfterMs,
    failureWindowMs: cfg.failureWindowMs,
    pollMs: cfg.pollMs,
    onError: (err, endpointId) =>
      logger && logger.error({ err, endpointId }, 'webhook delivery step failed; retried on the next wake-up'),
    ...(onAttempt ? { onAttempt } : {}),
  });
  const service = new WebhookService(repo, store.events, box, sender, {
    allowPrivateTargets,
    ownReceivers: own,
    secretOverlapSec: cfg.secretOverlapSec,
    onChanged: (id) => deliverer.kick(id),
  });
  return {
    feed,
    service,
    deliverer,
    repo,
    start() {
      feed.start();
      deliverer.start();
    },
    async stop() {
      await deliverer.stop();
      feed.stop();
    },
  };
}
