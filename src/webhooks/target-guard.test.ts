import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { postWebhook } from './http-post.js';
import { checkTarget, isPrivateAddress, OwnReceivers, parseTargetUrl } from './target-guard.js';

describe('webhook target guard', () => {
  it('knows private, loopback, link-local and mapped addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::10.0.0.1',
      '224.0.0.1',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isPrivateAddress(a), a).toBe(false);
  });

  it('refuses every IPv6 form that carries a private IPv4 address, and lets the same forms of a public one through', () => {
    const refused = [
      '::127.0.0.1',
      '::7f00:1',
      '::10.0.0.1',
      '::a9fe:a9fe', // IPv4-compatible ::/96 (seen: http://[::127.0.0.1]/ accepted)
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '::ffff:0:7f00:1',
      '::ffff:0:a00:1', // IPv4-mapped, IPv4-translated (RFC 6145)
      '64:ff9b::7f00:1',
      '64:ff9b::c0a8:101',
      '64:ff9b:1::1',
      '64:ff9b:1:ffff::808:808', // NAT64 well-known /96; local-use /48 as a whole
      '2002:7f00:1::',
      '2002:a00:1::1',
      '2002:c0a8:101:1::1',
      '2002:a9fe:a9fe::', // 6to4 (seen: http://[2002:7f00:1::]/ accepted)
      '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client 127.0.0.1 obfuscated (inverted)
      '2001:0:4136:e378:8000:63bf:f5ff:fffe', // Teredo, client 10.0.0.1
      '2001:0:a00:1:8000:63bf:f7f7:f7f7', // Teredo, server 10.0.0.1, public client 8.8.8.8
      '2001:db8::1',
      '2001:2::1',
      '100::1',
      'ff02::1',
      'fec0::1',
    ];
    for (const a of refused) expect(isPrivateAddress(a), a).toBe(true);
    const allowed = [
      '::808:808',
      '::ffff:0:808:808',
      '64:ff9b::808:808',
      '2002:808:808::1',
      '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
      '2a00:1450:4001:80b::200e',
    ];
    for (const a of allowed) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('refuses the seen targets at create time', async () => {
    await expect(checkTarget('http://[::127.0.0.1]/', false)).rejects.toThrow(/private/);
    await expect(checkTarget('http://[2002:7f00:1::]/', false)).rejects.toThrow(/private/);
  });

  it('refuses bad URLs', () => {
    expect(() => parseTargetUrl('ftp://example.com/x')).toThrow(/http or https/);
    expect(() => parseTargetUrl('/relative')).toThrow(/absolute/);
    expect(() => parseTargetUrl('https://u:p@example.com/')).toThrow(/password/);
  });

  it('refuses private targets by address and by name unless allowed', async () => {
    await expect(checkTarget('http://127.0.0.1:9/hook', false)).rejects.toThrow(/127\.0\.0\.1/);
    await expect(checkTarget('http://[::1]:9/hook', false)).rejects.toThrow(/::1/);
    await expect(checkTarget('http://localhost:9/hook', false)).rejects.toThrow(/private/);
    await expect(checkTarget('http://169.254.169.254/latest/meta-data', false)).rejects.toThrow(/169\.254/);
    await expect(checkTarget('http://127.0.0.1:9/hook', true)).resolves.toBeInstanceOf(URL);
    await expect(checkTarget('https://93.184.215.14/hook', false)).resolves.toBeInstanceOf(URL);
  });

  it('checks the address a delivery actually connects to, whatever the name resolved to (DNS rebinding)', async () => {
    let received = 0;
    const server = createServer((req, res) => {
      received++;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      // A resolver whose answer changed after validation: it hands the connection a loopback address unchecked.
      const rebinding = ((_h: string, o: { all?: boolean }, cb: (e: null, a: unknown, f?: number) => void) =>
        o.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)) as never;
      const r = await postWebhook(
        `http://hooks.example.com:${port}/x`,
        '{}',
        {},
        { timeoutMs: 5000, allowPrivate: false, lookup: rebinding },
      );
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/refused: connected to 127\.0\.0\.1, a private address/);
      expect(received).toBe(0);
      // The same resolver with private targets allowed reaches the receiver: the refusal above was the guard's.
      const allowed = await postWebhook(
        `http://127.0.0.1:${port}/x`,
        '{}',
        {},
        { timeoutMs: 5000, allowPrivate: true },
      );
      expect(allowed.ok).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('every IPv6 form that embeds an IPv4 address is judged as that address (issue 46)', () => {
  // [form, an address of it carrying a private IPv4 one, the same form carrying a public one (null: refused whole)]
  const forms: Array<[string, string, string | null]> = [
    ['IPv4-mapped ::ffff:0:0/96', '::ffff:127.0.0.1', '::ffff:8.8.8.8'],
    ['IPv4-compatible ::/96', '::127.0.0.1', '::8.8.8.8'],
    ['IPv4-translated ::ffff:0:0:0/96', '::ffff:0:127.0.0.1', '::ffff:0:8.8.8.8'],
    ['6to4 2002::/16', '2002:7f00:1::1', '2002:808:808::1'],
    ['NAT64 well-known 64:ff9b::/96', '64:ff9b::169.254.169.254', '64:ff9b::8.8.8.8'],
    ['NAT64 local-use 64:ff9b:1::/48', '64:ff9b:1::808:808', null],
    ['Teredo 2001::/32, its server', '2001:0:7f00:1:8000:63bf:f7f7:f7f7', '2001:0:808:808:8000:63bf:f7f7:f7f7'],
    [
      'Teredo 2001::/32, its inverted client',
      '2001:0:808:808:8000:63bf:80ff:fffe',
      '2001:0:808:808:8000:63bf:f7f7:f7f7',
    ],
  ];
  it.each(forms)('%s: refused at create and at connect when the IPv4 inside is private', async (_form, bad, good) => {
    expect(isPrivateAddress(bad)).toBe(true);
    await expect(checkTarget(`http://[${bad}]/`, false)).rejects.toThrow(/private/);
    const r = await postWebhook(`http://[${bad}]:9/x`, '{}', {}, { timeoutMs: 2000, allowPrivate: false });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/^refused: /);
    if (good) {
      expect(isPrivateAddress(good)).toBe(false);
      expect((await checkTarget(`http://[${good}]/`, false)).hostname).toBe(new URL(`http://[${good}]/`).hostname);
    }
  });
});

describe("the service's own receivers", () => {
  it('allow exactly the registered origin and path prefix, after the URL is normalised', async () => {
    const own = new OwnReceivers();
    own.add('http://127.0.0.1:8080/app/demo/webhook-receiver/');
    const policy = (u: URL) => own.has(u);
    expect((await checkTarget('http://127.0.0.1:8080/app/demo/webhook-receiver/x', policy)).pathname).toBe(
      '/app/demo/webhook-receiver/x',
    );
    for (const url of [
      'http://127.0.0.1:8080/app/demo/webhook-receiver/',
      'http://127.0.0.1:8080/app/demo/webhook-receiver/../../metrics',
      'http://127.0.0.1:8080/app/demo/webhook-receiver/%2e%2e/%2e%2e/metrics',
      'http://127.0.0.1:8080/app/demo/webhook-receiver/x?y=1',
      'http://127.0.0.1:8081/app/demo/webhook-receiver/x',
      'http://127.0.0.2:8080/app/demo/webhook-receiver/x',
      'http://[::ffff:127.0.0.1]:8080/app/demo/webhook-receiver/x',
    ])
      await expect(checkTarget(url, policy), url).rejects.toThrow(/private/);
    own.delete('http://127.0.0.1:8080/app/demo/webhook-receiver/');
    await expect(checkTarget('http://127.0.0.1:8080/app/demo/webhook-receiver/x', policy)).rejects.toThrow(/private/);
  });
});
