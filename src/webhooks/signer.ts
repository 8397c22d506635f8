import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** `whsec_` + base64 of 32 random bytes: the Standard Webhooks secret format (24..64 bytes). */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Standard Webhooks signature headers. With several secrets (a rotation's overlap) the header carries one
 * `v1,<sig>` per secret, space-separated, so receivers holding either secret verify.
 */
export function signHeaders(msgId: string, at: Date, payload: string, secrets: string[]): SignedHeaders {
  if (secrets.length === 0) throw new Error('no signing secret');
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(msgId, at, payload)).join(' '),
  };
}
