import { describe, expect, it } from 'vitest';
import { checkTarget, isPrivateAddress, parseTargetUrl } from './target-guard.js';

describe('webhook target guard', () => {
  it('knows private, loopback, link-local and mapped addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::10.0.0.1', '224.0.0.1']) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(a), a).toBe(false);
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
});
