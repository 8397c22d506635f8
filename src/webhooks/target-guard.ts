import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Outbound webhook targets must not reach the service's own network (SSRF): loopback, private, link-local,
 * CGNAT, multicast and reserved ranges are refused unless the deployment allows private targets. Every
 * address a name resolves to is checked, and the same check runs as the connection's DNS lookup, so a name
 * that changes its answer between validation and delivery (DNS rebinding) is still refused.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/**
 * The IPv4 addresses an IPv6 address carries inside it: a packet to it reaches (or is translated to) that
 * IPv4 host, so it is judged as that host. IPv4-compatible ::/96, IPv4-mapped ::ffff:0:0/96, IPv4-translated
 * ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16 (bits 16-47), Teredo 2001::/32 (server in bits 32-63,
 * client in the last 32 bits, inverted).
 */
function embeddedV4(v6: ipaddr.IPv6): string[] {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zero(0, 6) || (zero(0, 5) && p[5] === 0xffff) || (zero(0, 4) && p[4] === 0xffff && p[5] === 0))
    return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x2002) return [v4(p[1]!, p[2]!)];
  if (p[0] === 0x2001 && p[1] === 0) return [v4(p[2]!, p[3]!), v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
  return [];
}

/** Ranges ipaddr.js names that embed an IPv4 address handled above; any other named range is not public. */
const EMBEDDING = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

const privateV4 = (addr: string): boolean =>
  blocked.check(addr, 'ipv4') || ipaddr.IPv4.parse(addr).range() !== 'unicast';

export function isPrivateAddress(addr: string): boolean {
  const family = isIP(addr);
  if (family === 4) return privateV4(addr);
  if (family !== 6) return true;
  const bare = addr.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names an interface, not part of the address
  const v6 = ipaddr.IPv6.parse(bare);
  // NAT64 local-use prefix (RFC 8215): translated by a network's own gateway, never a public host.
  if (v6.parts[0] === 0x64 && v6.parts[1] === 0xff9b && v6.parts[2] === 1) return true;
  const inner = embeddedV4(v6);
  if (inner.length > 0) return inner.some(privateV4);
  if (blocked.check(bare, 'ipv6')) return true;
  const range = v6.range();
  return range !== 'unicast' && !EMBEDDING.has(range);
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

/** The path under which the demo serves its own webhook receiver (src/api/app/demo.ts). */
export const OWN_RECEIVER_PATH = '/app/demo/webhook-receiver/';

/**
 * Receivers of the service itself that a webhook may target although they are on loopback (the demo's own
 * receiver): URL prefixes such as `http://127.0.0.1:8080/app/demo/webhook-receiver/`, added when the listener is
 * bound. A URL matches on its parsed, normalised form (dot segments resolved), without query or fragment, so
 * `/app/demo/webhook-receiver/../../metrics` is not a receiver. One set per service (webhooks/compose.ts).
 */
export class OwnReceivers {
  private readonly prefixes = new Set<string>();

  add(prefix: string): void {
    this.prefixes.add(new URL(prefix).href);
  }

  delete(prefix: string): void {
    this.prefixes.delete(new URL(prefix).href);
  }

  has(url: URL): boolean {
    if (url.search !== '' || url.hash !== '' || url.protocol !== 'http:') return false;
    for (const p of this.prefixes) if (url.href.startsWith(p) && url.href.length > p.length) return true;
    return false;
  }
}

/** Whether private addresses are allowed for this URL: everywhere (the operator's setting) or only some. */
export type PrivatePolicy = boolean | ((url: URL) => boolean);
export const allowsPrivate = (policy: PrivatePolicy, url: URL): boolean =>
  typeof policy === 'function' ? policy(url) : policy;

/** Resolves the URL's host and refuses it if any address is private (unless allowed). */
export async function checkTarget(raw: string, allowPrivate: PrivatePolicy): Promise<URL> {
  const url = parseTargetUrl(raw);
  if (allowsPrivate(allowPrivate, url)) return url;
  const host = hostOf(url);
  const addrs = isIP(host) ? [host] : await resolveAll(host);
  const bad = addrs.find(isPrivateAddress);
  if (bad)
    throw new TargetRefused(
      `url resolves to ${bad}, a private, loopback or link-local address; such targets are not allowed here`,
    );
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
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string },
  cb: LookupCb,
): void {
  dnsLookup(hostname, { all: true, verbatim: true }, (err, addrs) => {
    if (err) return cb(err, []);
    const bad = addrs.find((a) => isPrivateAddress(a.address));
    if (bad) return cb(new TargetRefused(`${hostname} resolves to ${bad.address}, a private address`), []);
    if (options.all) return cb(null, addrs);
    cb(null, addrs[0]!.address, addrs[0]!.family);
  });
}

export const isIpLiteralHost = (url: URL): string | null => (isIP(hostOf(url)) ? hostOf(url) : null);
