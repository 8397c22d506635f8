import { createCipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialBox, keyId, loadCredentialKeys, readKeyFile } from '../../src/auth/credential-box.js';
import { rotateKeys } from '../../src/auth/key-rotation.js';
import { newId } from '../../src/domain/ids.js';
import { Store } from '../../src/store/store.js';
import { storeCases } from '../engine/copy-harness.js';

/** A value sealed by the code before key ids (v1: no key id in it). */
function sealV1(key: Buffer, value: unknown): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([c.update(JSON.stringify(value), 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

const stores = await storeCases({ durable: true });

describe.each(stores)('credential key rotation on the %s store (issue 13)', (_name, makeDb) => {
  let store: Store;
  let drop: () => Promise<void>;
  const keyDir = mkdtempSync(join(tmpdir(), 'ct-keys-'));
  const keyFile = join(keyDir, 'secret.key');
  const plain = new Map<string, unknown>();

  beforeAll(async () => {
    const d = await makeDb();
    drop = d.drop;
    store = await Store.open(
      d.databaseUrl ? { dataDir: ':memory:', databaseUrl: d.databaseUrl } : { dataDir: d.dataDir! },
    );
    const ring = loadCredentialKeys({ keyFile });
    const box = new CredentialBox(ring.current);
    const user = await store.users.create(`rot-${randomBytes(3).toString('hex')}@example.test`, 'x');
    for (let i = 0; i < 6; i++) {
      const creds = { password: `broker-pass-${i}`, accessToken: `tok-${i}` };
      // Two rows as the old code sealed them, the rest as today's.
      const a = await store.accounts.create({
        userId: user.id,
        platform: 'sim',
        role: 'slave',
        name: `a${i}`,
        brokerAccountId: `b${i}-${randomBytes(3).toString('hex')}`,
        brokerAccountNumber: `${i}`,
        credentialsEnc: i < 2 ? sealV1(ring.current, creds) : box.seal(creds),
      });
      plain.set(`accounts.credentials_enc:${a.id}`, creds);
    }
    const hooks = store.webhooks;
    const e = await hooks.insert({
      id: newId('whe'),
      userId: user.id,
      url: 'https://example.com/h',
      eventTypes: [],
      secretEnc: box.seal('whsec_current'),
      previousSecretEnc: box.seal('whsec_previous'),
    });
    plain.set(`webhook_endpoints.secret_enc:${e.id}`, 'whsec_current');
    plain.set(`webhook_endpoints.previous_secret_enc:${e.id}`, 'whsec_previous');
    // A Telegram alert channel's bot token (docs/alerts.md) is sealed the same way.
    const ch = await store.alerts.insert({
      id: newId('alc'),
      userId: user.id,
      kind: 'telegram',
      telegramChatId: '42',
      secretEnc: box.seal({ botToken: '123456789:AAH-bot-token' }),
      secretHint: '...oken',
    });
    plain.set(`alert_channels.secret_enc:${ch.id}`, { botToken: '123456789:AAH-bot-token' });
  });
  afterAll(async () => {
    await store?.close();
    await drop?.();
    rmSync(keyDir, { recursive: true, force: true });
  });

  const opensAll = async (box: CredentialBox) => {
    const values = await store.sealed.all();
    expect(values).toHaveLength(plain.size);
    for (const v of values) expect(box.open(v.sealed), `${v.column}:${v.id}`).toEqual(plain.get(`${v.column}:${v.id}`));
    return values;
  };

  it('re-seals every credential, webhook secret and alert bot token under a new key; an interrupted run resumes; the old key then opens nothing', async () => {
    const oldKey = readKeyFile(keyFile)[0]!;
    // Interrupted after three values.
    await expect(
      rotateKeys(store.sealed, loadCredentialKeys({ keyFile }), {
        onValue: (n) => {
          if (n === 3) throw new Error('power cut');
        },
      }),
    ).rejects.toThrow('power cut');
    const midway = readKeyFile(keyFile);
    expect(midway).toHaveLength(2);
    expect(keyId(midway[1]!)).toBe(keyId(oldKey));
    const newKey = midway[0]!;
    // Meanwhile a process started now opens values under either key.
    const ring = loadCredentialKeys({ keyFile });
    const mixed = await opensAll(new CredentialBox(ring.current, ring.previous));
    expect(mixed.filter((v) => v.sealed.startsWith(`v2.${keyId(newKey)}.`)).length).toBe(3);

    // The second run carries on with the same new key.
    const r = await rotateKeys(store.sealed, loadCredentialKeys({ keyFile }));
    expect(r).toMatchObject({ keyId: keyId(newKey), resealed: plain.size - 3, alreadyCurrent: 3, finished: true });
    expect(readKeyFile(keyFile).map(keyId)).toEqual([keyId(newKey)]);
    expect((readFileSync(keyFile, 'utf8').match(/\n/g) ?? []).length).toBe(1);
    const after = await opensAll(new CredentialBox(newKey));
    expect(after.every((v) => v.sealed.startsWith(`v2.${keyId(newKey)}.`))).toBe(true);
    for (const v of after) expect(() => new CredentialBox(oldKey).open(v.sealed)).toThrow();
    expect(existsSync(`${keyFile}.tmp-${process.pid}`)).toBe(false);

    // Nothing left to do: a further run with the environment's key pair (new key set, old one as previous).
    const third = randomBytes(32);
    const envRing = loadCredentialKeys({
      configured: third.toString('base64'),
      previous: newKey.toString('base64'),
      keyFile: null,
    });
    const r2 = await rotateKeys(store.sealed, envRing);
    expect(r2).toMatchObject({ keyId: keyId(third), resealed: plain.size, finished: false });
    await opensAll(new CredentialBox(third));
  });
});
