import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../domain/errors.js';
import type { MtPlatform } from './capabilities.js';
import { readError } from './errors.js';
import {
  type MtServerGroup,
  parseAccountDto,
  parseAccountInformation,
  parseErrorBody,
  parseServerSearch,
  recommendedRetryMs,
} from './parse.js';
import type { MetaApiEndpoints } from '../endpoints.js';
import { MetaApiHosts } from './hosts.js';
import { MetaApiRawClient, newTransactionId, type WireResult } from './raw-client.js';

/**
 * The platform A connection flow (server + login + password) against MetaApi's provisioning API. Logic only:
 * the app's routes call these. Failures after something was created undeploy and delete it, so a wrong
 * password never leaves a paid, stuck account behind.
 */

export interface MetaApiEndpoint extends MetaApiEndpoints {
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** A client for the provisioning host, and (given the account's region) for its region's client-API host. */
function client(ep: MetaApiEndpoint, region?: string): MetaApiRawClient {
  const hosts = new MetaApiHosts({
    provisioningUrl: ep.baseUrl,
    token: ep.token,
    ...(ep.clientApiUrl ? { clientApiUrl: ep.clientApiUrl } : {}),
    ...(ep.regions ? { regions: ep.regions } : {}),
    ...(ep.hosts ? { hosts: ep.hosts } : {}),
    ...(ep.fetch ? { fetch: ep.fetch } : {}),
  });
  return new MetaApiRawClient({
    provisioningUrl: hosts.provisioningUrl,
    clientUrl: () =>
      region ? hosts.clientApi(region) : Promise.reject(new Error('the account region is not known yet')),
    token: ep.token,
    timeoutMs: ep.timeoutMs ?? 15_000,
    ...(ep.fetch ? { fetch: ep.fetch } : {}),
  });
}

export async function searchMtServers(
  input: MetaApiEndpoint & { platform: MtPlatform; query: string },
): Promise<MtServerGroup[]> {
  if (input.platform !== 'mt4' && input.platform !== 'mt5')
    throw new AppError('invalid_request', 'platform must be mt4 or mt5');
  const r = await client(input).searchServers(input.platform === 'mt4' ? 4 : 5, input.query.trim());
  if (r.kind !== 'response' || r.status !== 200) throw readError(r, 'MetaApi server search');
  return parseServerSearch(r.body);
}

/**
 * MetaApi may charge for each failed add that ends in E_AUTH and asks clients not to retry the same
 * credentials (fact sheet A2, billing note). This remembers SHA-256 digests of failed sets, never the password.
 */
export class FailedCredentialMemo {
  private readonly failed = new Set<string>();
  static digest(c: { platform: string; server: string; login: string; password: string }): string {
    return createHash('sha256').update(`${c.platform}\n${c.server}\n${c.login}\n${c.password}`).digest('hex');
  }
  has(c: Parameters<typeof FailedCredentialMemo.digest>[0]): boolean {
    return this.failed.has(FailedCredentialMemo.digest(c));
  }
  add(c: Parameters<typeof FailedCredentialMemo.digest>[0]): void {
    this.failed.add(FailedCredentialMemo.digest(c));
  }
}

export interface ProvisionMtAccountInput extends MetaApiEndpoint {
  server: string;
  login: string;
  password: string;
  platform: MtPlatform;
  name?: string;
  magic?: number;
  region?: string;
  /** Bound on the whole flow: create (202 polls), deploy, connect. */
  waitMs?: number;
  /** Poll period of the account state. */
  pollMs?: number;
  failedCredentials?: FailedCredentialMemo;
}

export interface ProvisionedMtAccount {
  /** MetaApi account id: what the adapter addresses. */
  accountId: string;
  /** MT login: the account number the user sees. */
  accountNumber: string;
  platform: MtPlatform;
  server: string;
  broker: string;
  currency: string;
  name: string;
  hedging: boolean;
  /** Its MetaApi region: which client-API and streaming hosts serve it. */
  region: string;
}

const credentialsError = () =>
  // Never echo what was typed: the message may end up in logs.
  new AppError('broker_auth_failed', 'the broker refused the login: check the account number, password and server', {
    details: { reason: 'E_AUTH' },
  });

export async function provisionMtAccount(input: ProvisionMtAccountInput): Promise<ProvisionedMtAccount> {
  for (const k of ['baseUrl', 'token', 'server', 'login', 'password'] as const) {
    if (typeof input[k] !== 'string' || input[k].trim() === '')
      throw new AppError('invalid_request', `${k} is required`);
  }
  if (input.platform !== 'mt4' && input.platform !== 'mt5')
    throw new AppError('invalid_request', 'platform must be mt4 or mt5');
  const login = input.login.trim();
  if (!/^\d+$/.test(login))
    throw new AppError('invalid_request', 'the MetaTrader login is the account number: digits only', {
      details: { field: 'login' },
    });
  const creds = { platform: input.platform, server: input.server.trim(), login, password: input.password };
  if (input.failedCredentials?.has(creds)) throw credentialsError();

  const raw = client(input);
  const deadline = Date.now() + (input.waitMs ?? 5 * 60_000);
  const pollMs = input.pollMs ?? 2000;
  const txId = newTransactionId();
  const body = {
    name: input.name ?? `${creds.platform.toUpperCase()} ${login}@${creds.server}`,
    server: creds.server,
    login,
    password: input.password,
    platform: input.platform,
    magic: input.magic ?? 0,
    type: 'cloud-g2' as const,
    ...(input.region ? { region: input.region } : {}),
  };

  // Create: 202 means "same request, same transaction-id, after the recommended wait".
  let created: WireResult;
  for (;;) {
    created = await raw.createAccount(body, txId);
    if (created.kind !== 'response' || created.status !== 202) break;
    // The body's recommendedRetryTime is precise to the millisecond; Retry-After only to the second.
    const waitMs =
      recommendedRetryMs(parseErrorBody(created.body).metadata) ??
      (created.retryAfterSec !== null ? created.retryAfterSec * 1000 : pollMs);
    if (Date.now() + waitMs > deadline)
      throw new AppError('upstream_unavailable', 'MetaApi is still detecting the broker settings; try again later', {
        retryable: true,
      });
    await sleep(Math.max(10, waitMs));
  }
  if (created.kind === 'response' && created.status === 400) {
    const e = parseErrorBody(created.body);
    if (e.code === 'E_AUTH') {
      input.failedCredentials?.add(creds);
      throw credentialsError();
    }
    if (e.code === 'E_SRV_NOT_FOUND') {
      const d = e.details as { serversByBrokers?: unknown } | null;
      throw new AppError(
        'invalid_request',
        `unknown MetaTrader server "${creds.server}": pick one from the server search`,
        {
          details: {
            reason: 'E_SRV_NOT_FOUND',
            field: 'server',
            ...(d?.serversByBrokers ? { suggestions: d.serversByBrokers } : {}),
          },
        },
      );
    }
    if (e.code === 'E_SERVER_TIMEZONE')
      throw new AppError('upstream_unavailable', 'MetaApi could not detect the broker settings; try again later', {
        retryable: true,
        details: { reason: e.code },
      });
  }
  if (created.kind !== 'response' || (created.status !== 201 && created.status !== 200))
    throw readError(created, 'MetaApi account creation');
  const accountId = parseAccountDto(created.body).id;

  try {
    const deployed = await raw.deployAccount(accountId);
    if (deployed.kind !== 'response' || deployed.status >= 300) throw readError(deployed, 'MetaApi deploy');
    let last: { state: string; connectionStatus: string; region: string | null } = {
      state: 'UNKNOWN',
      connectionStatus: 'DISCONNECTED',
      region: null,
    };
    for (;;) {
      const r = await raw.readAccount(accountId);
      if (r.kind !== 'response' || r.status !== 200) throw readError(r, 'MetaApi account state');
      last = parseAccountDto(r.body);
      if (last.state === 'DEPLOYED' && last.connectionStatus === 'CONNECTED') break;
      if (last.state === 'DEPLOY_FAILED')
        throw new AppError('upstream_error', 'MetaApi could not deploy the account', {
          details: { state: last.state },
        });
      if (Date.now() + pollMs > deadline) {
        // Deployed but never connected: the broker keeps refusing the terminal's login.
        if (last.state === 'DEPLOYED') throw credentialsError();
        throw new AppError('upstream_unavailable', `MetaApi did not finish deploying in time (state ${last.state})`, {
          retryable: true,
        });
      }
      await sleep(pollMs);
    }
    // The account lives on its region's client-API host, not on the provisioning host.
    const region = last.region ?? input.region ?? 'new-york';
    const info = await client(input, region).accountInformation(accountId);
    if (info.kind !== 'response' || info.status !== 200) throw readError(info, 'MetaApi account information');
    const ai = parseAccountInformation(info.body);
    return {
      accountId,
      accountNumber: ai.login,
      platform: ai.platform,
      server: ai.server || creds.server,
      broker: ai.broker,
      currency: ai.currency,
      name: ai.name,
      hedging: ai.hedging,
      region,
    };
  } catch (err) {
    await removeMtAccount({ ...input, accountId }).catch(() => undefined);
    throw err;
  }
}

/** Undeploy, then delete: what a failed connect or a user removing the account leaves at MetaApi is nothing. */
export async function removeMtAccount(input: MetaApiEndpoint & { accountId: string }): Promise<void> {
  const raw = client(input);
  const un = await raw.undeployAccount(input.accountId);
  if (un.kind === 'response' && un.status === 404) return;
  const del = await raw.deleteAccount(input.accountId);
  if (del.kind !== 'response' || (del.status >= 300 && del.status !== 404))
    throw readError(del, 'MetaApi account removal');
}
