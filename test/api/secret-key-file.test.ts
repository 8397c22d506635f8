import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { keyId, readKeyFile } from '../../src/auth/credential-box.js';
import { loadConfig } from '../../src/config/config.js';
import { CLI } from '../helpers/cli-command.js';
import { startTestService } from '../helpers/service.js';

/** Issue 13: the key that encrypts broker credentials sat in the data dir, beside what it encrypts. */
const dirs: string[] = [];
const temp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const WARNING = 'sits in the data dir beside what it encrypts';

describe('the credential key file', () => {
  it('--secret-key-file wins over COPYTRADE_SECRET_KEY_FILE, which wins over <data dir>/secret.key', () => {
    expect(loadConfig({ dataDir: '/d' }, {}).secretKeyFile).toBe('/d/secret.key');
    expect(loadConfig({ dataDir: '/d' }, { COPYTRADE_SECRET_KEY_FILE: '/k/env.key' }).secretKeyFile).toBe('/k/env.key');
    expect(
      loadConfig({ dataDir: '/d', secretKeyFile: '/k/flag.key' }, { COPYTRADE_SECRET_KEY_FILE: '/k/env.key' })
        .secretKeyFile,
    ).toBe('/k/flag.key');
    expect(loadConfig({ dataDir: ':memory:' }, {}).secretKeyFile).toBeNull();
  });

  it('warns at start when the key sits in the data dir; a key file outside it is used and no warning given', async () => {
    const data = temp('ct-data-');
    const beside = await startTestService({ dataDir: data });
    try {
      expect(existsSync(join(data, 'secret.key'))).toBe(true);
      expect(beside.logs.join('\n')).toContain(WARNING);
    } finally {
      await beside.close();
    }
    const data2 = temp('ct-data-');
    const keyFile = join(temp('ct-keys-'), 'copytrade.key');
    const outside = await startTestService({ dataDir: data2, env: { COPYTRADE_SECRET_KEY_FILE: keyFile } });
    try {
      expect(existsSync(keyFile)).toBe(true);
      expect(existsSync(join(data2, 'secret.key'))).toBe(false);
      expect(outside.logs.join('\n')).not.toContain(WARNING);
      // The demo's sealed credentials open with that key: its accounts read their brokers.
      const accounts = (await outside.call('GET', '/v1/accounts', { token: outside.demo!.apiKey })).body.accounts;
      const positions = await outside.call('GET', `/v1/accounts/${accounts[0].id}/positions`, {
        token: outside.demo!.apiKey,
      });
      expect(positions.status).toBe(200);
    } finally {
      await outside.close();
    }
    // `copytrade secrets rotate` on that data dir and key file (the service is stopped).
    const before = keyId(readKeyFile(keyFile)[0]!);
    const r = await promisify(execFile)(
      process.execPath,
      [...CLI, 'secrets', 'rotate', '--data-dir', data2, '--secret-key-file', keyFile, '--json'],
      { env: { ...process.env, DATABASE_URL: '' } },
    );
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ finished: true, alreadyCurrent: 0 });
    expect(report.resealed).toBeGreaterThan(0);
    expect(readKeyFile(keyFile).map(keyId)).toEqual([report.keyId]);
    expect(report.keyId).not.toBe(before);
    const again = await startTestService({ dataDir: data2, env: { COPYTRADE_SECRET_KEY_FILE: keyFile } });
    try {
      const accounts = (await again.call('GET', '/v1/accounts', { token: again.demo!.apiKey })).body.accounts;
      expect(
        (await again.call('GET', `/v1/accounts/${accounts[0].id}/positions`, { token: again.demo!.apiKey })).status,
      ).toBe(200);
    } finally {
      await again.close();
    }
  }, 120_000);
});
