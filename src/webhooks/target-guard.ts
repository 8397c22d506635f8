import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Outbound webhook targets must not reach the service's own network (SSRF): loopback, private, link-local,
 * CGNAT, multicast and reserved ranges are refused unless the deployment allows private targets. Every
 * address a name resolves to is checked, and the same check runs as the connection's DNS lookup, so a name
 * that changes its answer between validation and delivery (DNS rebinding) is still refused.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64]] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped, IPv4-compatible or NAT64 IPv6 address, if any. */
function embeddedV4(addr: string): string | null {
  const m = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
  if (m) return m[1]!;
  const h = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(addr);
  if (!h) return null;
  const hi = parseInt(h[1]!, 16);
  const lo = parseInt(h[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isPrivateAddress(addr: string): boolean {
  const family = isIP(addr);
  if (family === 4) return blocked.check(addr, 'ipv4');
  if (family === 6) {
    const v4 = embeddedV4(addr);
    if (v4) return blocked.check(v4, 'ipv4');
    return blocked.check(addr, 'ipv6');
  }
  return true;
}

export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/** Syntax of an endpoint URL: absolute http(s), no credentials in it, not too long. */
export function parseTargetUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('url is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRefused('url must be http or https');
  // Credentials in a URL end up in lists and logs; receivers authenticate deliveries by the signature.
  if (url.username || url.password) throw new TargetRefused('url must not carry a user name or password');
  if (raw.length > 2048) throw new TargetRefused('url is longer than 2048 characters');
  return url;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Resolves the URL's host and refuses it if any address is private (unless allowed). */
export async function checkTarget(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = parseTargetUrl(raw);
  if (allowPrivate) return url;
  const host = hostOf(url);
  const addrs = isIP(host) ? [host] : await resolveAll(host);
  const bad = addrs.find(isPrivateAddress);
  if (bad) throw new TargetRefused(`url resolves to ${bad}, a private, loopback or link-local address; such targets are not allowed here`);
  return url;
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => {
      if (err) reject(new TargetRefused(`url host ${host} does not resolve (${err.code ?? err.message})`));
      else resolve(addrs.map((a) => a.address));
    });
  });
}

type LookupCb = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that refuses private answers, checked on the very addresses it connects to. */
export function guardedLookup(hostname: string, options: { all?: boolean; family?: number | string }, cb: LookupCb): void {
  dnsLookup(hostname, { all: true, verbatim: true }, (err, addrs) => {
    if (err) return cb(err, []);
    const bad = addrs.find((a) => isPrivateAddress(a.address));
    if (bad) return cb(new TargetRefused(`${hostname} resolves to ${bad.address}, a private address`), []);
    if (options.all) return cb(null, addrs);
    cb(null, addrs[0]!.address, addrs[0]!.family);
  });
}

export const isIpLiteralHost = (url: URL): string | null => (isIP(hostOf(url)) ? hostOf(url) : null);
