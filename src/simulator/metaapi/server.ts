import { HeldSockets } from '../http-common.js';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ActiveFault, FaultOp, SimBrokerApi } from '../contract.js';
import { ApiError, type Reply, readJson, send, tooManyRequests } from './http.js';
import {
  clientApiHost,
  closeServer,
  type Listening,
  listenOn,
  provisioningHost,
  SIM_DOMAIN,
  SIM_REGIONS,
  SIM_STREAM_HOSTNAME,
  streamHost,
} from './hosts.js';
import { AccountRegistry, type AccountView, type MetaApiAccount, mtPlatformOf } from './registry.js';
import type { Keeper } from '../keeper.js';
import { attachMetaApiStream, type MetaApiStreamControl } from './stream.js';
import { resultOf, runTrade, type TradeCtx, tradeOp } from './trade.js';
import {
  accountInformationDto,
  type CommentStore,
  dealDto,
  fillPrices,
  orderDto,
  positionDto,
  specificationDto,
} from './wire.js';

export interface MetaApiSimOptions {
  host?: string;
  port?: number;
  /** The `auth-token` every request must carry; a JWT-shaped random one when omitted. */
  token?: string;
  /** 202 phase of account creation (automatic broker settings detection). */
  detectionMs?: number;
  /** DEPLOYING -> DEPLOYED. */
  deployMs?: number;
  /** DEPLOYED + DISCONNECTED -> CONNECTED. */
  connectMs?: number;
  /** Where a wrong password shows: the create call (E_AUTH), or a terminal that never connects. */
  credentialCheck?: 'create' | 'connect';
  /** How long a "never answered" request is held before its socket is destroyed (fault delayMs wins). */
  holdMs?: number;
  /** Clock in ms for provisioning phases and retry times; Date.now when omitted. */
  now?: () => number;
  /** Provisioned accounts kept across restarts (the `copytrade simulator` process); in memory only without it. */
  keepAccounts?: Keeper<MetaApiAccount[]>;
  /** Period of the streaming API's `status` packets (default 5 s). */
  streamStatusMs?: number;
  /** What the domain lookup answers (default metaapi-sim.invalid: never resolvable, so nothing leaves loopback). */
  domain?: string;
  /** Regions served, each with its own client-API and streaming port; the first is the default of new accounts. */
  regions?: string[];
}

export interface MetaApiSimServer {
  /** The provisioning host (account CRUD, server search, the domain lookup); client-API paths are 404 here. */
  baseUrl: string;
  /** What the domain lookup answers; host names are built on it (see hosts.ts). */
  domain: string;
  regions: string[];
  /** Each region's client-API (REST) host. */
  clientApiUrls: Record<string, string>;
  /** Each region's streaming host (socket.io at `/ws`). */
  streamUrls: Record<string, string>;
  /** Host name -> loopback base URL, for every host the simulator plays: its stand-in for DNS. */
  hosts: Record<string, string>;
  token: string;
  /** Provisioned MetaApi accounts with their derived state, for tests. */
  accounts(): AccountView[];
  /** The streaming API of every region and its network-fault hooks. */
  stream: MetaApiStreamControl;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const b64url = (s: string) => Buffer.from(s).toString('base64url');

function isoParam(v: string, name: string): Date {
  const t = Date.parse(v);
  if (Number.isNaN(t))
    throw new ApiError(400, 'Validation failed', {
      details: [{ parameter: name, message: `${name} must be an ISO-8601 time` }],
    });
  return new Date(t);
}

function paging(q: URLSearchParams): { offset: number; limit: number } {
  const offset = Number(q.get('offset') ?? 0);
  const limit = Number(q.get('limit') ?? 1000);
  if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new ApiError(400, 'Validation failed', {
      details: [{ parameter: 'offset/limit', message: 'offset >= 0, 1 <= limit <= 1000' }],
    });
  }
  return { offset, limit };
}

const ACCOUNT = '/users/current/accounts';

/**
 * MetaApi REST (provisioning + client API) served over a simulated broker on loopback, following the fact sheet
 * (docs/platforms/platform-a-metatrader.md). Faults come from `broker.faults`, keyed by the
 * simulated account, so a test scripts them the same way for every protocol. A `disconnect` fault on a trade
 * applies the write and answers -11 TRADE_RETCODE_DISCONNECTED_DURING_TRADE: MetaApi's "outcome unknown".
 */
export async function startMetaApiSimServer(
  broker: SimBrokerApi,
  opts: MetaApiSimOptions = {},
): Promise<MetaApiSimServer> {
  const token =
    opts.token ??
    `${b64url('{"alg":"RS512","typ":"JWT"}')}.${b64url(JSON.stringify({ sub: 'sim', iat: Date.now() }))}.${randomBytes(24).toString('base64url')}`;
  const domain = opts.domain ?? SIM_DOMAIN;
  const regions = opts.regions?.length ? [...opts.regions] : [...SIM_REGIONS];
  const registry = new AccountRegistry(broker, {
    defaultRegion: regions[0]!,
    detectionMs: opts.detectionMs ?? 40,
    deployMs: opts.deployMs ?? 30,
    connectMs: opts.connectMs ?? 30,
    credentialCheck: opts.credentialCheck ?? 'create',
    ...(opts.now ? { now: opts.now } : {}),
  });
  const kept = opts.keepAccounts;
  if (kept) {
    if (kept.initial) registry.restore(kept.initial);
    registry.onChange = () => kept.save(registry.state());
  }
  const holdMs = opts.holdMs ?? 30_000;
  const comments: CommentStore = new Map();
  const held = new HeldSockets(holdMs);
  const hold = (req: IncomingMessage, fault: ActiveFault) => held.hold(req, fault);

  /** Faults that end the request before the handler runs; returns true when the request is finished or abandoned. */
  const shortCircuit = (
    req: IncomingMessage,
    res: ServerResponse,
    f: ActiveFault,
    api: 'client' | 'provisioning',
    write: boolean,
  ): boolean => {
    switch (f.kind) {
      case 'reset':
        req.socket.destroy();
        return true;
      case 'disconnect':
        if (write) return false;
        req.socket.destroy();
        return true;
      case 'timeout_before_apply':
        hold(req, f);
        return true;
      case 'timeout_after_apply':
        if (write) return false;
        hold(req, f);
        return true;
      case 'rate_limit':
        send(res, tooManyRequests(f.retryAfterSec ?? 1, api, f.message, registry.now()).toReply());
        return true;
      case 'token_expired':
      case 'token_invalidated':
        send(res, new ApiError(401, f.message ?? 'Authorization token invalid').toReply());
        return true;
      case 'reject':
        if (write) return false;
        send(res, new ApiError(500, f.message ?? 'Internal error').toReply());
        return true;
      default:
        return false;
    }
  };

  async function withFault(
    req: IncomingMessage,
    res: ServerResponse,
    op: Exclude<FaultOp, '*'>,
    simId: string,
    api: 'client' | 'provisioning',
    run: () => Reply,
  ): Promise<void> {
    const f = broker.faults.take(op, simId);
    if (f && shortCircuit(req, res, f, api, false)) return;
    if (f?.kind === 'delay') await sleep(f.delayMs ?? 0);
    send(res, run());
  }

  async function handleTrade(
    req: IncomingMessage,
    res: ServerResponse,
    simId: string,
    platform: 'mt4' | 'mt5',
    body: Record<string, unknown>,
  ): Promise<void> {
    const op = tradeOp(body);
    const f = broker.faults.take(op, simId);
    const ctx: TradeCtx = { broker, simId, platform, comments };
    if (f && shortCircuit(req, res, f, 'client', true)) return;
    switch (f?.kind) {
      // biome-ignore lint/suspicious/noFallthroughSwitchClause: the timeout case below is the rest of this one
      case 'cancel_after_timeout':
        ctx.refuseAs = f.refuseAs ?? 'cancelled';
      // falls through: taken (then refused), and the answer never arrives
      case 'timeout_after_apply':
        try {
          runTrade(ctx, body);
        } catch {
          // The answer is lost either way; only the applied state matters.
        }
        hold(req, f);
        return;
      case 'disconnect': {
        const r = runTrade(ctx, body);
        send(res, { status: 200, body: resultOf(platform, 'unknown', {}, f.message ?? `applied as ${r.stringCode}`) });
        return;
      }
      case 'reject':
        send(res, { status: 200, body: resultOf(platform, 'reject', {}, f.message) });
        return;
      case 'partial_fill':
        ctx.partialRatio = f.partialRatio ?? 0.5;
        break;
      case 'delay':
        await sleep(f.delayMs ?? 0);
        break;
      default:
        break;
    }
    send(res, { status: 200, body: runTrade(ctx, body) });
  }

  async function handleClient(
    req: IncomingMessage,
    res: ServerResponse,
    accountId: string,
    rest: string,
    url: URL,
  ): Promise<boolean> {
    const { acc, sim } = registry.connected(accountId);
    const platform = mtPlatformOf(sim);
    const ctx = { platform, magic: acc.magic, comments };
    const quoteFor = (symbol: string, side: 'buy' | 'sell') => {
      const q = broker.quote(symbol);
      return side === 'buy' ? q.ask : q.bid;
    };
    const read = (run: () => unknown) =>
      withFault(req, res, 'read', sim.id, 'client', () => ({ status: 200, body: run() }));
    const orders = (list: ReturnType<SimBrokerApi['orders']>) => {
      const prices = fillPrices(list.flatMap((o) => broker.dealsOf(sim.id, { orderId: o.id })));
      return list.map((o) =>
        orderDto(o, {
          ...ctx,
          fillPrice: prices.get(o.id) ?? null,
          currentPrice: o.status === 'pending' ? quoteFor(o.symbol, o.side) : null,
        }),
      );
    };
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && rest === '/trade') {
      const body = await readJson(req);
      await handleTrade(req, res, sim.id, platform, body);
      return true;
    }
    if (req.method !== 'GET') return false;
    if (rest === '/account-information') {
      await read(() => accountInformationDto(broker, sim));
      return true;
    }
    if (rest === '/positions') {
      await read(() => broker.positions(sim.id).map((p) => positionDto(p, acc.magic, comments)));
      return true;
    }
    if ((m = /^\/positions\/([^/]+)$/.exec(rest))) {
      const pid = decodeURIComponent(m[1]!);
      await read(() => {
        const p = broker.positions(sim.id).find((x) => x.id === pid);
        if (!p) throw new ApiError(404, `Position ${pid} not found`);
        return positionDto(p, acc.magic, comments);
      });
      return true;
    }
    if (rest === '/orders') {
      await read(() => orders(broker.orders(sim.id)));
      return true;
    }
    if ((m = /^\/orders\/([^/]+)$/.exec(rest))) {
      const oid = decodeURIComponent(m[1]!);
      await read(() => {
        const o = broker.orders(sim.id).find((x) => x.id === oid);
        if (!o) throw new ApiError(404, `Order ${oid} not found`);
        return orders([o])[0];
      });
      return true;
    }
    if ((m = /^\/history-(deals|orders)\/time\/([^/]+)\/([^/]+)$/.exec(rest))) {
      const from = isoParam(decodeURIComponent(m[2]!), 'startTime');
      const to = isoParam(decodeURIComponent(m[3]!), 'endTime');
      const { offset, limit } = paging(url.searchParams);
      // Start inclusive, end exclusive, as documented.
      const inRange = (iso: string) => Date.parse(iso) >= from.getTime() && Date.parse(iso) < to.getTime();
      const kind = m[1];
      await read(() => {
        // The broker reads from the newest end down to `from` only; the end is exclusive here, inclusive there.
        const all =
          kind === 'deals'
            ? broker
                .deals(sim.id, { from })
                .filter((d) => inRange(d.time))
                .map((d) => dealDto(d, ctx))
            : orders(
                broker
                  .orders(sim.id, { includeHistory: true, from })
                  .filter((o) => o.status !== 'pending' && inRange(o.createdAt)),
              );
        return all.slice(offset, offset + limit);
      });
      return true;
    }
    if ((m = /^\/symbols\/([^/]+)\/specification$/.exec(rest))) {
      const symbol = decodeURIComponent(m[1]!);
      await read(() => {
        const i = broker.instrument(symbol);
        if (!i) throw new ApiError(404, `Symbol ${symbol} not found`);
        return specificationDto(i);
      });
      return true;
    }
    if (rest === '/symbols') {
      await read(() => broker.instruments().map((i) => i.symbol));
      return true;
    }
    return false;
  }

  const auth = (req: IncomingMessage) => {
    if (req.headers['auth-token'] !== token)
      throw new ApiError(401, 'Authorization token invalid or missing (header auth-token)');
  };
  /** `/users/current/accounts/:id[/rest]` split; null for any other path. */
  const accountPath = (path: string) => {
    if (!path.startsWith(`${ACCOUNT}/`)) return null;
    const [rawId, ...restParts] = path.slice(ACCOUNT.length + 1).split('/');
    return { accountId: decodeURIComponent(rawId ?? ''), rest: restParts.length ? `/${restParts.join('/')}` : '' };
  };

  /** The provisioning host: account CRUD, server search, the domain lookup. Client-API paths are 404 here. */
  async function provisioning(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    auth(req);
    const path = url.pathname.replace(/\/+$/, '');
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && path === '/users/current/servers/mt-client-api') {
      send(res, { status: 200, body: { domain, hostname: SIM_STREAM_HOSTNAME } });
      return;
    }
    if (req.method === 'GET' && path === '/users/current/regions') {
      send(res, { status: 200, body: regions });
      return;
    }
    if (req.method === 'GET' && (m = /^\/known-mt-servers\/([45])\/search$/.exec(path))) {
      send(res, {
        status: 200,
        body: registry.searchServers(Number(m[1]) as 4 | 5, url.searchParams.get('query') ?? ''),
      });
      return;
    }
    if (path === ACCOUNT) {
      if (req.method === 'POST') {
        const body = await readJson(req);
        if (typeof body.region === 'string' && body.region !== '' && !regions.includes(body.region))
          throw new ApiError(400, 'Validation failed', {
            details: [{ parameter: 'region', message: `region must be one of ${regions.join(', ')}` }],
          });
        const simId = broker.accounts().find((s) => s.meta.server === body.server && s.login === body.login)?.id ?? '';
        const tx = req.headers['transaction-id'];
        await withFault(req, res, 'auth', simId, 'provisioning', () =>
          registry.create(typeof tx === 'string' ? tx : undefined, body),
        );
        return;
      }
      if (req.method === 'GET') {
        const q = (url.searchParams.get('query') ?? '').toLowerCase();
        const list = registry
          .list()
          .filter((a) => !q || [a.id, a.name, a.server, a.login].some((s) => s.toLowerCase().includes(q)));
        send(res, { status: 200, body: list.map((a) => registry.dto(a)) });
        return;
      }
    }
    const ap = accountPath(path);
    if (!ap) throw new ApiError(404, 'Not found');
    const { accountId, rest } = ap;
    if (rest === '' && req.method === 'GET') {
      send(res, { status: 200, body: registry.dto(registry.get(accountId)) });
      return;
    }
    if (rest === '' && req.method === 'DELETE') {
      registry.remove(accountId);
      send(res, { status: 204 });
      return;
    }
    if (req.method === 'POST' && (rest === '/deploy' || rest === '/undeploy' || rest === '/redeploy')) {
      const acc = registry.get(accountId);
      await withFault(req, res, 'auth', acc.simId ?? '', 'provisioning', () => {
        if (rest === '/undeploy') registry.undeploy(accountId);
        else {
          if (rest === '/redeploy') registry.undeploy(accountId);
          registry.deploy(accountId);
        }
        return { status: 204 };
      });
      return;
    }
    throw new ApiError(404, 'Not found');
  }

  /** One region's client-API host: an account of another region is unknown here, as on the real hosts. */
  async function clientApi(region: string, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    auth(req);
    if (req.method === 'GET' && url.pathname === '/hashing-ignored-field-lists') {
      // The SDK's terminal hash manager reads it before it synchronizes (lib/clients/metaApi/clientApi.client.ts);
      // no field is ignored by the simulator's hashes.
      const none = { specification: [], position: [], order: [] };
      send(res, { status: 200, body: { g1: none, g2: none } });
      return;
    }
    const ap = accountPath(url.pathname.replace(/\/+$/, ''));
    if (!ap || ap.rest === '') throw new ApiError(404, 'Not found');
    if (registry.get(ap.accountId).region !== region)
      throw new ApiError(404, `Trading account with id ${ap.accountId} not found`);
    if (!(await handleClient(req, res, ap.accountId, ap.rest, url))) throw new ApiError(404, 'Not found');
  }

  const handler =
    (route: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>) =>
    (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://sim');
      route(req, res, url).catch((err: unknown) => {
        if (err instanceof ApiError) send(res, err.toReply());
        else send(res, new ApiError(500, err instanceof Error ? err.message : 'internal error').toReply());
      });
    };
  const notFound = async () => {
    throw new ApiError(404, 'Not found');
  };

  const bind = opts.host ?? '127.0.0.1';
  const listening: Listening[] = [];
  const streams: MetaApiStreamControl[] = [];
  const hosts: Record<string, string> = {};
  const clientApiUrls: Record<string, string> = {};
  const streamUrls: Record<string, string> = {};
  try {
    const prov = await listenOn(bind, opts.port ?? 0, handler(provisioning));
    listening.push(prov);
    hosts[provisioningHost(domain)] = prov.url;
    for (const region of regions) {
      const client = await listenOn(
        bind,
        0,
        handler((req, res, url) => clientApi(region, req, res, url)),
      );
      listening.push(client);
      clientApiUrls[region] = client.url;
      hosts[clientApiHost(region, domain)] = client.url;
      // The streaming host answers socket.io only; its REST paths are 404, as a client-API host's /ws is not served.
      const streaming = await listenOn(bind, 0, handler(notFound));
      listening.push(streaming);
      streams.push(
        attachMetaApiStream(streaming.server, {
          broker,
          registry,
          comments,
          token,
          region,
          statusMs: opts.streamStatusMs ?? 5_000,
        }),
      );
      streamUrls[region] = streaming.url;
      for (const instance of [0, 1]) hosts[streamHost(SIM_STREAM_HOSTNAME, region, instance, domain)] = streaming.url;
    }
  } catch (err) {
    for (const s of streams) await s.close();
    for (const l of listening) await closeServer(l.server);
    throw err;
  }
  const stream: MetaApiStreamControl = {
    drop: () => {
      for (const s of streams) s.drop();
    },
    refuse: (on, at) => {
      for (const s of streams) s.refuse(on, at);
    },
    connections: () => streams.reduce((n, s) => n + s.connections(), 0),
    close: async () => {
      for (const s of streams) await s.close();
    },
  };

  return {
    baseUrl: listening[0]!.url,
    domain,
    regions,
    clientApiUrls,
    streamUrls,
    hosts,
    token,
    accounts: () => registry.list().map((a) => registry.view(a)),
    stream,
    close: async () => {
      held.releaseAll();
      await stream.close();
      for (const l of listening) await closeServer(l.server);
    },
  };
}
