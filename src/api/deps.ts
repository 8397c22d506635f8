import type { AuthService } from '../auth/auth-service.js';
import type { AdapterRegistry } from '../engine/adapter-registry.js';
import type { OrderService } from '../engine/order-service.js';
import type { PanicCloseService } from '../engine/panic-close.js';
import type { RiskGuard } from '../engine/risk/guard.js';
import type { ShadowService } from '../engine/shadow.js';
import type { Reconciler } from '../engine/reconciler.js';
import type { Store } from '../store/store.js';
import type { EventFeed } from '../events/feed.js';
import type { EventCursors } from '../events/cursor-codec.js';
import type { WebhookService } from '../webhooks/endpoint-service.js';
import type { Account } from '../domain/account.js';
import type { FastifyRequest } from 'fastify';
import type { Need, Role } from '../domain/people/roles.js';
import { accountFor, groupFor } from '../auth/access.js';
import { userOf } from './plugins/auth.js';
import type { Platform } from '../domain/types.js';
import type { CredentialBox } from '../auth/credential-box.js';
import type { PlatformEndpoints } from '../platforms/endpoints.js';
import type { BridgeHub } from '../platforms/bridge/hub.js';
import type { BridgeTokens } from '../auth/bridge-tokens.js';
import type { QuotaConfig } from '../config/quotas-config.js';
import type { V1Limits } from './plugins/rate-limit.js';
import type { ReceiptKey } from '../receipts/receipt-key.js';
import type { AlertChannelService } from '../alerts/channel-service.js';
import type { DemoInbox } from '../alerts/demo-inbox.js';
import type { SignUpService } from '../auth/sign-up.js';

/** What the HTTP layer needs from the rest of the service (built in main.ts). */
export interface ApiDeps {
  store: Store;
  auth: AuthService;
  adapters: AdapterRegistry;
  /** The order route's pipeline: in this process (serve), or the Master's worker over NATS (api). */
  orders: Pick<OrderService, 'send'>;
  panic: PanicCloseService;
  risk: RiskGuard;
  shadow: ShadowService;
  /** Drift between Master, links and Slaves; absent where the engine does not run (route answers 503). */
  reconciler?: Reconciler;
  /** This process among those sharing the store (idempotency claims carry it). */
  instanceId: string;
  /** Family V's default rate limits (an API key may have dedicated ones). */
  v1Limits: V1Limits;
  /** Per-user limit of account-connection requests. */
  connectLimit: { max: number; windowMs: number };
  /** Per-user quotas; 0 = no limit. */
  quotas: QuotaConfig;
  /** Seals broker credentials before they reach the store. */
  box: CredentialBox;
  /** Where each platform's servers are (the simulator's front ends in demo mode). */
  endpoints: PlatformEndpoints;
  /** Terminal bridge (self-hosted platform A): EA connections and their tokens; absent where not composed. */
  bridge?: { hub: BridgeHub; tokens: BridgeTokens };
  webhooks: WebhookService;
  /** Built-in alerts: channels, rules, tests and deliveries (docs/alerts.md). */
  alerts: AlertChannelService;
  /** Self-service sign-up (off unless the operator turns it on: docs/people.md). */
  signUp?: SignUpService;
  /** Demo mode without SMTP or a Bot API URL: the in-memory inbox alerts go to (demo only). */
  alertInbox?: DemoInbox;
  /** Gap-free reads of the event outbox (list and live stream). */
  eventFeed: EventFeed;
  /** The events routes' cursors: the outbox position, opaque and per user. */
  eventCursors: EventCursors;
  streamHeartbeatMs: number;
  /** The key whose public half family V serves for checking receipt heads (absent: the receipt-key route is 503). */
  receiptKey?: ReceiptKey;
  /** Demo mode only: the simulated brokers' spare logins the wizards show (absent otherwise: the route is not served). */
  demoBrokerLogins?: () => Promise<unknown>;
}

/**
 * An account the caller may `need` (owned, or shared with a role that allows it: src/api/access.ts), optionally of
 * one platform; one it may not see is the same 404 as an unknown id, one it sees without the role is 403.
 */
export const ownedAccount = (
  deps: ApiDeps,
  req: FastifyRequest,
  id: string,
  need: Need,
  platform?: Platform,
): Promise<Account> => accountFor(deps.store, userOf(req), id, need, platform);

/** A copier group the caller may `need`, with its owner's user id (what the store reads the group by). */
export const reqGroup = (
  deps: Pick<ApiDeps, 'store'>,
  req: FastifyRequest,
  id: string,
  need: Need,
): Promise<{ id: string; ownerId: string; role: Role }> => groupFor(deps.store, userOf(req), id, need);
