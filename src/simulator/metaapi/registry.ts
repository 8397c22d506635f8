import { randomUUID } from 'node:crypto';
import type { SimAccount, SimBrokerApi } from '../contract.js';
import { ApiError, type Reply } from './http.js';

export type MtPlatform = 'mt4' | 'mt5';
export type AccountState = 'DEPLOYING' | 'DEPLOYED' | 'UNDEPLOYED';
export type ConnectionStatus = 'CONNECTED' | 'DISCONNECTED' | 'DISCONNECTED_FROM_BROKER';

/** One MetaApi account (an "API server" for an MT login), as the provisioning API keeps it. */
export interface MetaApiAccount {
  id: string;
  name: string;
  login: string;
  server: string;
  platform: MtPlatform;
  magic: number;
  region: string;
  createdAt: string;
  /** Simulated account behind the login, when server and login exist. */
  simId: string | null;
  /** Whether the broker accepts this login/password (checked at create or when the terminal connects). */
  credentialsOk: boolean;
  /** ms timestamp of the last deploy request; null while undeployed. */
  deployedAt: number | null;
}

export interface AccountView {
  id: string;
  state: AccountState;
  connectionStatus: ConnectionStatus;
  login: string;
  server: string;
  platform: MtPlatform;
  simId: string | null;
}

export interface RegistryOptions {
  /** How long create answers 202 ("broker settings detection in progress") before the final answer. */
  detectionMs: number;
  deployMs: number;
  connectMs: number;
  /** 'create': a wrong password fails the create call (E_AUTH); 'connect': create succeeds, the terminal never connects. */
  credentialCheck: 'create' | 'connect';
  /** Region of an account created without one. */
  defaultRegion?: string;
  /** Clock in ms; tests drive it so provisioning phases never race the machine's speed. */
  now?: () => number;
}

export const DEFAULT_BROKER = 'Simulated Markets Ltd';

/**
 * Who an MT login belongs to lives in `account.meta` (server, password, platform, broker) plus `account.login`,
 * so every protocol front end shares one set of simulated accounts.
 */
export function mtPlatformOf(sim: SimAccount): MtPlatform {
  return sim.meta.platform === 'mt4' ? 'mt4' : 'mt5';
}

interface PendingCreate {
  readyAt: number;
  body: NewAccountBody;
  final?: Reply;
}

interface NewAccountBody {
  name: string;
  server: string;
  login: string;
  password: string;
  platform: MtPlatform;
  magic: number;
  region: string;
}

/**
 * Provisioning state. Deploy and connection progress is derived from timestamps at read time, so the
 * simulator owns no timers and a test never waits on anything it did not ask for.
 */
export class AccountRegistry {
  private readonly accounts = new Map<string, MetaApiAccount>();
  private readonly creates = new Map<string, PendingCreate>();
  readonly now: () => number;
  /** Called after every change of a provisioned account, before the answer (see UpstreamState). */
  onChange: (() => void) | null = null;

  constructor(
    private readonly broker: SimBrokerApi,
    private readonly opts: RegistryOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The provisioned accounts a restart of the simulator must keep (a create still in detection is not kept). */
  state(): MetaApiAccount[] {
    return [...this.accounts.values()].map((a) => ({ ...a }));
  }

  restore(accounts: MetaApiAccount[]): void {
    for (const a of accounts) this.accounts.set(a.id, { ...a });
  }

  /** Broker company -> server names, for `/known-mt-servers/{4|5}/search`. */
  searchServers(version: 4 | 5, query: string): Record<string, string[]> {
    const q = query.trim().toLowerCase();
    const out: Record<string, string[]> = {};
    for (const sim of this.broker.accounts()) {
      const server = sim.meta.server;
      // One simulated market serves every platform: an account with a TradeLocker login (email) is platform B's,
      // and its server is no MetaTrader server.
      if (!server || sim.meta.email || (version === 4) !== (mtPlatformOf(sim) === 'mt4')) continue;
      const broker = sim.meta.broker ?? DEFAULT_BROKER;
      if (q && !server.toLowerCase().includes(q) && !broker.toLowerCase().includes(q)) continue;
      const list = (out[broker] ??= []);
      if (!list.includes(server)) list.push(server);
    }
    return out;
  }

  /** POST /users/current/accounts: 202 until detection is over, then the same final answer on every repeat. */
  create(transactionId: string | undefined, raw: Record<string, unknown>): Reply {
    if (!transactionId || !/^[A-Za-z0-9]{32}$/.test(transactionId)) {
      throw new ApiError(400, 'transaction-id header must be 32 alphanumeric characters');
    }
    let pending = this.creates.get(transactionId);
    if (!pending) {
      const body = validateNew(raw, this.opts.defaultRegion ?? 'new-york');
      const version = body.platform === 'mt4' ? 4 : 5;
      if (Object.values(this.searchServers(version, body.server)).every((list) => !list.includes(body.server))) {
        throw new ApiError(
          400,
          'Server file not found for the specified server name. Please check the server name or use a provisioning profile',
          {
            details: {
              code: 'E_SRV_NOT_FOUND',
              serversByBrokers: this.searchServers(version, body.server.slice(0, 3)),
            },
          },
        );
      }
      pending = { readyAt: this.now() + this.opts.detectionMs, body };
      this.creates.set(transactionId, pending);
    }
    if (pending.final) return pending.final;
    const waitMs = pending.readyAt - this.now();
    if (waitMs > 0) {
      return {
        status: 202,
        body: {
          message: 'Automatic broker settings detection is in progress, please retry later',
          metadata: { recommendedRetryTime: new Date(pending.readyAt).toISOString() },
        },
        headers: { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) },
      };
    }
    pending.final = this.finishCreate(pending.body);
    return pending.final;
  }

  private finishCreate(body: NewAccountBody): Reply {
    const sim = this.findSim(body.server, body.login, body.platform);
    const credentialsOk = sim !== null && sim.meta.password === body.password;
    if (!credentialsOk && this.opts.credentialCheck === 'create') {
      // The real API sends `details` as the bare code string here, unlike E_SRV_NOT_FOUND's object.
      return new ApiError(400, 'Failed to authenticate to the broker: invalid account number or password', {
        details: 'E_AUTH',
      }).toReply();
    }
    const acc: MetaApiAccount = {
      id: randomUUID().replace(/-/g, ''),
      name: body.name,
      login: body.login,
      server: body.server,
      platform: body.platform,
      magic: body.magic,
      region: body.region,
      createdAt: new Date(this.now()).toISOString(),
      simId: sim?.id ?? null,
      credentialsOk,
      deployedAt: null,
    };
    this.accounts.set(acc.id, acc);
    this.onChange?.();
    return { status: 201, body: { id: acc.id, state: 'UNDEPLOYED' } };
  }

  get(id: string): MetaApiAccount {
    const acc = this.accounts.get(id);
    if (!acc) throw new ApiError(404, `Trading account with id ${id} not found`);
    return acc;
  }

  list(): MetaApiAccount[] {
    return [...this.accounts.values()];
  }

  deploy(id: string): void {
    const acc = this.get(id);
    // Deploy is idempotent: a second call does not restart the deployment.
    if (acc.deployedAt !== null) return;
    acc.deployedAt = this.now();
    this.onChange?.();
  }

  undeploy(id: string): void {
    this.get(id).deployedAt = null;
    this.onChange?.();
  }

  remove(id: string): void {
    this.get(id);
    this.accounts.delete(id);
    this.onChange?.();
  }

  view(acc: MetaApiAccount, now = this.now()): AccountView {
    const base = { id: acc.id, login: acc.login, server: acc.server, platform: acc.platform, simId: acc.simId };
    if (acc.deployedAt === null) return { ...base, state: 'UNDEPLOYED', connectionStatus: 'DISCONNECTED' };
    const age = now - acc.deployedAt;
    if (age < this.opts.deployMs) return { ...base, state: 'DEPLOYING', connectionStatus: 'DISCONNECTED' };
    if (!acc.credentialsOk || !acc.simId || !this.broker.account(acc.simId))
      return { ...base, state: 'DEPLOYED', connectionStatus: 'DISCONNECTED_FROM_BROKER' };
    if (age < this.opts.deployMs + this.opts.connectMs)
      return { ...base, state: 'DEPLOYED', connectionStatus: 'DISCONNECTED' };
    return { ...base, state: 'DEPLOYED', connectionStatus: 'CONNECTED' };
  }

  dto(acc: MetaApiAccount): Record<string, unknown> {
    const v = this.view(acc);
    return {
      _id: acc.id,
      name: acc.name,
      login: acc.login,
      server: acc.server,
      version: acc.platform === 'mt4' ? 4 : 5,
      platform: acc.platform,
      type: 'cloud-g2',
      magic: acc.magic,
      region: acc.region,
      reliability: 'regular',
      state: v.state,
      connectionStatus: v.connectionStatus,
      createdAt: acc.createdAt,
    };
  }

  /** The simulated account a client-API call addresses; 404 unless deployed and connected, as the real API. */
  connected(id: string): { acc: MetaApiAccount; sim: SimAccount } {
    const acc = this.get(id);
    const v = this.view(acc);
    if (v.state !== 'DEPLOYED') throw new ApiError(404, `Trading account ${id} is not deployed (state ${v.state})`);
    if (v.connectionStatus !== 'CONNECTED')
      throw new ApiError(404, `Trading account ${id} is not connected to the broker yet`);
    return { acc, sim: this.broker.account(acc.simId!)! };
  }

  private findSim(server: string, login: string, platform: MtPlatform): SimAccount | null {
    return (
      this.broker
        .accounts()
        .find((s) => s.meta.server === server && s.login === login && mtPlatformOf(s) === platform) ?? null
    );
  }
}

function validateNew(b: Record<string, unknown>, defaultRegion: string): NewAccountBody {
  const str = (k: string) => (typeof b[k] === 'string' ? (b[k] as string).trim() : '');
  const missing = ['name', 'server', 'login', 'password'].filter((k) => !str(k));
  if (typeof b.magic !== 'number') missing.push('magic');
  if (missing.length)
    throw new ApiError(400, 'Validation failed', {
      details: missing.map((k) => ({ parameter: k, message: `${k} is required` })),
    });
  if (!/^\d+$/.test(str('login')))
    throw new ApiError(400, 'Validation failed', {
      details: [{ parameter: 'login', message: 'login must contain digits only' }],
    });
  const platform = str('platform') || 'mt5';
  if (platform !== 'mt4' && platform !== 'mt5')
    throw new ApiError(400, 'Validation failed', {
      details: [{ parameter: 'platform', message: 'platform must be mt4 or mt5' }],
    });
  return {
    name: str('name'),
    server: str('server'),
    login: str('login'),
    password: b.password as string,
    platform,
    magic: b.magic as number,
    region: str('region') || defaultRegion,
  };
}
