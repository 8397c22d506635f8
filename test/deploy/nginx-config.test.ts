import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackTlsMaterial } from '../../src/simulator/ctrader/certs.js';

/**
 * deploy/nginx/copytrade.conf (docs/going-live.md) is checked by Debian's nginx itself: `nginx -t` on the file as
 * it is, in a temp prefix with a throwaway certificate where the file expects one. CI installs nginx (.ci/run), so
 * there a missing nginx fails this test; elsewhere install it with `apt-get install nginx`.
 */
const run = promisify(execFile);
const CONF = fileURLToPath(new URL('../../deploy/nginx/copytrade.conf', import.meta.url));
const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((p) => existsSync(p));

describe('the TLS reverse proxy example (deploy/nginx/copytrade.conf)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  /** The file copied byte for byte into a temp conf dir, with a certificate at tls/; the prefix beside it. */
  async function layout(text?: string): Promise<{ conf: string; prefix: string }> {
    const root = await mkdtemp(join(tmpdir(), 'ct-nginx-'));
    dirs.push(root);
    const confDir = join(root, 'conf');
    const prefix = join(root, 'prefix');
    await mkdir(join(confDir, 'tls'), { recursive: true });
    await mkdir(join(prefix, 'logs'), { recursive: true });
    await mkdir(join(prefix, 'temp'), { recursive: true });
    const tls = await loopbackTlsMaterial();
    await writeFile(join(confDir, 'tls', 'fullchain.pem'), tls.cert);
    await writeFile(join(confDir, 'tls', 'privkey.pem'), tls.key, { mode: 0o600 });
    const conf = join(confDir, 'copytrade.conf');
    if (text === undefined) await copyFile(CONF, conf);
    else await writeFile(conf, text);
    return { conf, prefix };
  }

  const nginxTest = (l: { conf: string; prefix: string }) =>
    run(NGINX!, ['-t', '-c', l.conf, '-p', `${l.prefix}/`, '-e', 'logs/error.log']).then(
      (r) => ({ ok: true, out: r.stderr }),
      (e: { stderr?: string }) => ({ ok: false, out: e.stderr ?? String(e) }),
    );

  it('nginx is installed (CI installs it; a missing one fails here rather than skipping the check)', () => {
    if (!NGINX && process.env.CI !== 'true') {
      console.warn('nginx is not installed: apt-get install nginx to check deploy/nginx/copytrade.conf');
      return;
    }
    expect(NGINX, 'nginx not found: .ci/run installs it with apt_install nginx').toBeDefined();
  });

  it.runIf(NGINX)('passes `nginx -t` as written, certificates and paths where the file says', async () => {
    const l = await layout();
    expect(await readFile(l.conf, 'utf8')).toBe(await readFile(CONF, 'utf8'));
    const r = await nginxTest(l);
    expect(r.out).toMatch(/syntax is ok/);
    expect(r.out).toMatch(/test is successful/);
    expect(r.ok, r.out).toBe(true);
  });

  it.runIf(NGINX)('the check can fail: a broken copy and a missing certificate are refused', async () => {
    const text = await readFile(CONF, 'utf8');
    const broken = await nginxTest(await layout(text.replace('proxy_buffering off;', 'proxy_buffering maybe;')));
    expect(broken.ok).toBe(false);
    expect(broken.out).toMatch(/proxy_buffering/);
    const l = await layout();
    await rm(join(l.conf, '..', 'tls', 'privkey.pem'));
    const noKey = await nginxTest(l);
    expect(noKey.ok).toBe(false);
    expect(noKey.out).toMatch(/privkey\.pem/);
  });

  it('sends the client address, the scheme and the stream unbuffered to copytrade on loopback', async () => {
    const text = await readFile(CONF, 'utf8');
    expect(text).toMatch(/server 127\.0\.0\.1:8080;/);
    expect(text).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(text).toMatch(/proxy_set_header X-Forwarded-Proto \$scheme;/);
    expect(text).toMatch(/location ~ \^\/\(app\/\)\?v1\/events\/stream\$ \{[^}]*proxy_buffering off;/);
    expect(text).toMatch(/return 301 https:/);
  });
});
