import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateSecret, signHeaders } from './signer.js';

describe('signer', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    const s = generateSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    expect(generateSecret()).not.toBe(s);
  });

  it('signs so the standardwebhooks package verifies', () => {
    const secret = generateSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'webhook.test', data: {} });
    const h = signHeaders('evt_1', new Date(), body, [secret]);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...h })).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateSecret()).verify(body, { ...h })).toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, { ...h })).toThrow();
  });

  it('during a rotation, carries one signature per secret and each secret verifies', () => {
    const [oldS, newS] = [generateSecret(), generateSecret()];
    const body = '{"a":1}';
    const h = signHeaders('evt_2', new Date(), body, [newS, oldS]);
    expect(h['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(oldS).verify(body, { ...h })).toEqual({ a: 1 });
    expect(new Webhook(newS).verify(body, { ...h })).toEqual({ a: 1 });
  });

  it('stamps the timestamp in seconds, which the verifier checks against its tolerance', () => {
    const secret = generateSecret();
    const h = signHeaders('evt_3', new Date(Date.now() - 10 * 60_000), '{}', [secret]);
    expect(() => new Webhook(secret).verify('{}', { ...h })).toThrow(/too old/);
  });
});
