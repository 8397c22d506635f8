import type { Logger } from 'pino';
import type { CredentialBox } from '../auth/credential-box.js';
import { TELEGRAM_API_URL, type AlertsConfig } from '../config/alerts-config.js';
import type { EventFeed } from '../events/feed.js';
import type { Webhooks } from '../webhooks/compose.js';
import type { AlertsRepo } from '../store/repos/alerts.js';
import { AlertChannelService } from './channel-service.js';
import { DemoInbox } from './demo-inbox.js';
import { AlertDispatcher } from './dispatcher.js';
import { EmailSender } from './email-sender.js';
import type { ChannelSender, SendResult } from './send-result.js';
import { TelegramSender } from './telegram-sender.js';

export interface Alerts {
  service: AlertChannelService;
  dispatcher: AlertDispatcher;
  /** Demo mode without an SMTP server or a Bot API URL: where the messages go instead (demo only). */
  demoInbox: DemoInbox | null;
  start(): void;
  stop(): Promise<void>;
}

export interface AlertsOptions {
  demo?: boolean;
  logger?: Logger | false;
  clock?: () => number;
  onAttempt?: (r: SendResult) => void;
}

/** Alerts as the core (and tests) build them, on the webhooks' event feed. */
export function createAlerts(
  repo: AlertsRepo,
  feed: EventFeed,
  box: CredentialBox,
  cfg: AlertsConfig,
  opts: AlertsOptions = {},
): Alerts {
  const email = new EmailSender(cfg.smtp, cfg.timeoutMs);
  const telegram = new TelegramSender(box, {
    baseUrl: cfg.telegramApiUrl ?? TELEGRAM_API_URL,
    timeoutMs: cfg.timeoutMs,
  });
  // Demo only: what the operator did not configure is caught by the in-memory inbox, so no message leaves.
  const demoInbox = opts.demo && (!cfg.smtp || !cfg.telegramApiUrl) ? new DemoInbox() : null;
  const senders: Record<string, ChannelSender> = {
    email: demoInbox && !cfg.smtp ? demoInbox : email,
    telegram: demoInbox && !cfg.telegramApiUrl ? demoInbox : telegram,
  };
  const logger = opts.logger ?? false;
  const dispatcher = new AlertDispatcher(repo, feed, senders, {
    windowMs: cfg.windowMs,
    gatherMs: cfg.gatherMs,
    retryScheduleMs: cfg.retryScheduleMs,
    pollMs: cfg.pollMs,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.onAttempt ? { onAttempt: opts.onAttempt } : {}),
    onError: (err, channelId) => {
      if (logger) logger.error({ err, channelId }, 'alert step failed; retried on the next pass');
    },
  });
  const service = new AlertChannelService(repo, box, senders, () => dispatcher.nudge());
  return {
    service,
    dispatcher,
    demoInbox,
    start: () => dispatcher.start(),
    async stop() {
      await dispatcher.stop();
      email.close();
    },
  };
}

/** The webhooks with the alerts started and stopped beside them (the roles start and stop `hooks` only). */
export function startedTogether(webhooks: Webhooks, alerts: Alerts): Webhooks {
  return {
    ...webhooks,
    start() {
      webhooks.start();
      alerts.start();
    },
    async stop() {
      await alerts.stop();
      await webhooks.stop();
    },
  };
}
