import type { CredentialBox } from '../auth/credential-box.js';
import type { WireEvent } from '../events/wire.js';
import { postWebhook, type PostResult } from './http-post.js';
import { signHeaders } from './signer.js';
import type { EndpointRow } from '../store/repos/webhooks.js';
import { allowsPrivate, type PrivatePolicy } from './target-guard.js';

export interface SenderOptions {
  timeoutMs: number;
  /** Private targets allowed (the operator's setting), or only for some URLs (the service's own receivers). */
  allowPrivateTargets: PrivatePolicy;
}

/** The secrets that sign now: the current one, and the previous one while its rotation overlap lasts. */
export function signingSecrets(box: CredentialBox, ep: EndpointRow, now: Date): string[] {
  const out = [box.open<string>(ep.secretEnc)];
  if (ep.previousSecretEnc && ep.previousSecretExpiresAt && ep.previousSecretExpiresAt > now)
    out.push(box.open<string>(ep.previousSecretEnc));
  return out;
}

/** Signs one event for one endpoint and posts it. The event id is the webhook-id, stable across retries. */
export class WebhookSender {
  constructor(
    private readonly box: CredentialBox,
    private readonly opts: SenderOptions,
  ) {}

  send(ep: EndpointRow, event: WireEvent, signal?: AbortSignal): Promise<PostResult> {
    const body = JSON.stringify(event);
    const at = new Date();
    const headers = signHeaders(event.id, at, body, signingSecrets(this.box, ep, at));
    let allowPrivate = false;
    try {
      allowPrivate = allowsPrivate(this.opts.allowPrivateTargets, new URL(ep.url));
    } catch {
      // Not a URL: postWebhook refuses it with its reason.
    }
    return postWebhook(
      ep.url,
      body,
      { ...headers },
      { timeoutMs: this.opts.timeoutMs, allowPrivate, ...(signal ? { signal } : {}) },
    );
  }
}
