import type { CredentialBox } from '../auth/credential-box.js';
import { invalid, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { EVENT_TYPES, isEventType } from '../events/catalogue.js';
import { toWireEvent, type WireEvent } from '../events/wire.js';
import type { EventsRepo } from '../store/repos/events.js';
import type { PostResult } from './http-post.js';
import type { WebhookSender } from './sender.js';
import { generateSecret } from './signer.js';
import { checkTarget, type OwnReceivers, type PrivatePolicy, TargetRefused } from './target-guard.js';
import { MANUAL_ATTEMPT, type AttemptRow, type EndpointRow, type WebhookRepo } from '../store/repos/webhooks.js';

export interface EndpointInput {
  url: string;
  description?: string | null;
  eventTypes?: string[];
  enabled?: boolean;
}

export interface ServiceOptions {
  allowPrivateTargets: PrivatePolicy;
  /** The service's own receivers (the demo's), allowed although private; filled in once the listener is bound. */
  ownReceivers?: OwnReceivers;
  secretOverlapSec: number;
  /** Told after a user's change, so the deliverer retries at once instead of at its backed-off time. */
  onChanged?: (endpointId: string) => void;
}

/**
 * Managing a user's webhook endpoints. Secrets are generated here, sealed at rest, and returned only by
 * create and rotate. Every lookup is by (user, id): a foreign id is the same not-found as an unknown one.
 */
export class WebhookService {
  constructor(
    private readonly repo: WebhookRepo,
    private readonly events: EventsRepo,
    private readonly box: CredentialBox,
    private readonly sender: WebhookSender,
    private readonly opts: ServiceOptions,
  ) {}

  /** Where the service's own receivers are registered (the demo's), or null when it takes none. */
  get ownReceivers(): OwnReceivers | null {
    return this.opts.ownReceivers ?? null;
  }

  count(userId: string): Promise<number> {
    return this.repo.count(userId);
  }

  async create(userId: string, input: EndpointInput): Promise<{ endpoint: EndpointRow; secret: string }> {
    const url = await this.checkUrl(input.url);
    const secret = generateSecret();
    const endpoint = await this.repo.insert({
      id: newId('whe'),
      userId,
      url,
      description: input.description ?? null,
      eventTypes: this.checkTypes(input.eventTypes ?? []),
      secretEnc: this.box.seal(secret),
      enabled: input.enabled ?? true,
      // A new endpoint receives what happens from now on, not the user's whole history (replay: GET /v1/events).
      deliveredCursor: await this.repo.latestCursor(userId),
    });
    this.opts.onChanged?.(endpoint.id);
    return { endpoint, secret };
  }

  list(userId: string, page: { after?: string | undefined; limit?: number } = {}): Promise<EndpointRow[]> {
    return this.repo.list(userId, page);
  }

  async get(userId: string, id: string): Promise<EndpointRow> {
    const ep = await this.repo.owned(userId, id);
    if (!ep) throw notFound('webhook endpoint');
    return ep;
  }

  async update(userId: string, id: string, patch: Partial<EndpointInput>): Promise<EndpointRow> {
    await this.get(userId, id);
    const set: Parameters<WebhookRepo['update']>[2] = {};
    if (patch.url !== undefined) set.url = await this.checkUrl(patch.url);
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.eventTypes !== undefined) set.eventTypes = this.checkTypes(patch.eventTypes);
    if (patch.enabled !== undefined) {
      set.enabled = patch.enabled;
      // Re-enabling starts a new failure window; delivery resumes where it stopped, so nothing is missed.
      if (patch.enabled) Object.assign(set, { disabledReason: null, failingSince: null });
      else set.disabledReason = 'disabled by the user';
    }
    const ep = await this.repo.update(userId, id, set);
    if (!ep) throw notFound('webhook endpoint');
    this.opts.onChanged?.(ep.id);
    return ep;
  }

  /**
   * A new secret signs from now on; the old one keeps signing beside it for the overlap, so receivers can
   * switch at their pace. A rotation during an overlap drops the oldest secret.
   */
  async rotateSecret(
    userId: string,
    id: string,
    overlapSec = this.opts.secretOverlapSec,
  ): Promise<{ endpoint: EndpointRow; secret: string }> {
    const ep = await this.get(userId, id);
    const secret = generateSecret();
    const updated = await this.repo.update(userId, id, {
      secretEnc: this.box.seal(secret),
      previousSecretEnc: overlapSec > 0 ? ep.secretEnc : null,
      previousSecretExpiresAt: overlapSec > 0 ? new Date(Date.now() + overlapSec * 1000) : null,
    });
    if (!updated) throw notFound('webhook endpoint');
    return { endpoint: updated, secret };
  }

  async remove(userId: string, id: string): Promise<void> {
    if (!(await this.repo.remove(userId, id))) throw notFound('webhook endpoint');
  }

  /** One synchronous attempt of a `webhook.test` event; works on a disabled endpoint too (to check it is back). */
  async sendTest(userId: string, id: string): Promise<AttemptRow> {
    const ep = await this.get(userId, id);
    const event: WireEvent = {
      id: newId('evt'),
      type: 'webhook.test',
      timestamp: new Date().toISOString(),
      accountId: null,
      sequence: 0,
      schemaVersion: 1,
      data: { endpointId: ep.id, message: 'test event from copytrade' },
    };
    return this.manual(ep, event);
  }

  /**
   * Sends one stored event again to one endpoint, now, with its original id (receivers deduplicate on it).
   * It does not touch the endpoint's cursor or backoff: scheduled delivery goes on as before.
   */
  async redeliver(userId: string, id: string, eventId: string): Promise<AttemptRow> {
    const ep = await this.get(userId, id);
    const ev = await this.events.byId(userId, eventId);
    if (!ev) throw notFound('event');
    return this.manual(ep, toWireEvent(ev));
  }

  async attempts(userId: string, id: string, limit: number, before?: string): Promise<AttemptRow[]> {
    await this.get(userId, id);
    return this.repo.attempts(id, limit, before);
  }

  private async manual(ep: EndpointRow, event: WireEvent): Promise<AttemptRow> {
    const r: PostResult = await this.sender.send(ep, event);
    return this.repo.recordAttempt({
      endpointId: ep.id,
      eventId: event.id,
      attempt: MANUAL_ATTEMPT,
      status: r.status,
      ok: r.ok,
      latencyMs: r.latencyMs,
      responseSnippet: r.snippet,
      error: r.error,
      nextAttemptAt: null,
    });
  }

  private async checkUrl(url: string): Promise<string> {
    try {
      return (await checkTarget(url, this.opts.allowPrivateTargets)).toString();
    } catch (err) {
      if (err instanceof TargetRefused) throw invalid(err.message, { field: 'url' });
      throw err;
    }
  }

  private checkTypes(types: string[]): string[] {
    const unknown = types.filter((t) => !isEventType(t) || t === 'webhook.test');
    if (unknown.length > 0)
      throw invalid(
        `unknown event types: ${unknown.join(', ')}; subscribable types: ${EVENT_TYPES.filter((t) => t !== 'webhook.test').join(', ')}`,
        { field: 'eventTypes' },
      );
    return [...new Set(types)];
  }
}
