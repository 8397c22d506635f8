import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LOOPBACK_CERT_PEM, LOOPBACK_KEY_PEM } from './certs/loopback-test-cert.js';

const run = promisify(execFile);

export interface TlsMaterial {
  cert: string;
  key: string;
  /** Where it came from, for logs and tests. */
  source: 'openssl' | 'committed';
}

let cached: Promise<TlsMaterial> | null = null;

/**
 * A fresh self-signed certificate for 127.0.0.1/localhost, made once per process: the simulator is reached over
 * TLS like the real Open API, and the client trusts exactly this certificate through its `ca` option.
 */
export function loopbackTlsMaterial(): Promise<TlsMaterial> {
  cached ??= generate().catch(() => ({ cert: LOOPBACK_CERT_PEM, key: LOOPBACK_KEY_PEM, source: 'committed' as const }));
  return cached;
}

async function generate(): Promise<TlsMaterial> {
  const dir = await mkdtemp(join(tmpdir(), 'ctrader-sim-tls-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    await run(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyPath,
        '-out',
        certPath,
        '-days',
        '30',
        '-subj',
        '/CN=copytrade cTrader simulator (loopback only)',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
      ],
      { timeout: 10_000 },
    );
    const [cert, key] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
    return { cert, key, source: 'openssl' };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
