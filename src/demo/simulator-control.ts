import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readJsonObject } from '../simulator/http-common.js';
import type { SimAccountInit, SimBrokerApi } from '../simulator/contract.js';
import type { SimulatedBrokers } from './simulated-brokers.js';
import { demoView } from './demo-brokers.js';
import { DemoEas } from './demo-eas.js';

class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function str(body: Record<string, unknown>, k: string, optional = false): string | undefined {
  const v = body[k];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'string' || v === '') throw new ControlError(400, `${k} must be a non-empty string`);
  return v;
}

function initOf(body: Record<string, unknown>): SimAccountInit {
  const meta = body.meta ?? {};
  if (typeof meta !== 'object' || meta === null || Object.values(meta).some((v) => typeof v !== 'string'))
    throw new ControlError(400, 'meta must map names to strings');
  const balance = str(body, 'balance')!;
  if (!/^\d+(\.\d+)?$/.test(balance)) throw new ControlError(400, 'balance must be a decimal string');
  const leverage = body.leverage === undefined ? undefined : Number(body.leverage);
  if (leverage !== undefined && (!Number.isInteger(leverage) || leverage < 1))
    throw new ControlError(400, 'leverage must be a positive integer');
  const init: SimAccountInit = { balance, meta: meta as Record<string, string> };
  const currency = str(body, 'currency', true);
  if (currency) init.currency = currency;
  if (typeof body.hedging === 'boolean') init.hedging = body.hedging;
  if (leverage !== undefined) init.leverage = leverage;
  return init;
}

/**
 * The simulator process's control API (loopback, bearer token from the endpoints file): what the demo seeding
 * does to the market that a broker's own protocol cannot (open accounts, stand in for the cTrader consent page).
 * Account creation answers after the broker's journal has the account (see SimPersistence).
 */
export async function startControlServer(
  broker: SimBrokerApi,
  sim: SimulatedBrokers,
  o: { host: string; token: string },
): Promise<{ url: string; close(): Promise<void> }> {
  const expected = Buffer.from(`Bearer ${o.token}`);
  const authorised = (req: IncomingMessage) => {
    const got = Buffer.from(req.headers.authorization ?? '');
    return got.length === expected.length && timingSafeEqual(got, expected);
  };
  const accountView = (a: { id: string; login: string; meta: Record<string, string> }) =>
    demoView(a, sim.ctrader.ctidTraderAccountIdOf);
  const eas = new DemoEas(broker);
  const route = async (req: IncomingMessage): Promise<unknown> => {
    const url = new URL(req.url ?? '/', 'http://control');
    const key = `${req.method} ${url.pathname}`;
    if (key === 'GET /health') return { ok: true, pid: process.pid };
    if (key === 'GET /accounts') return broker.accounts().map(accountView);
    if (key === 'POST /accounts')
      return accountView(broker.createAccount(initOf(await readJsonObject(req, (s, m) => new ControlError(s, m)))));
    if (key === 'POST /ctrader/tokens')
      return sim.ctrader.issueTokenFor(str(await readJsonObject(req, (s, m) => new ControlError(s, m)), 'ctidUserId')!);
    // A simulated terminal EA for a demo account, dialling the service's bridge endpoint (issue 47's demo).
    if (key === 'POST /eas') {
      const body = await readJsonObject(req, (st, m) => new ControlError(st, m));
      const [accountId, url, token] = [str(body, 'accountId')!, str(body, 'url')!, str(body, 'token')!];
      if (!/^wss?:\/\//.test(url)) throw new ControlError(400, 'url must be a ws:// or wss:// URL');
      if (!broker.account(accountId)) throw new ControlError(404, `no simulated account ${accountId}`);
      await eas.start({ accountId, url, token });
      return { ok: true };
    }
    // Read-only, for benches: the cTrader requests received so far, per payload type.
    if (key === 'GET /ctrader/requests') return sim.ctrader.requestStats();
    // Read-only, for tests across processes: what the broker holds for one account (no duplicate copies).
    const held = /^\/accounts\/([^/]+)\/positions$/.exec(url.pathname);
    if (req.method === 'GET' && held) {
      const id = decodeURIComponent(held[1]!);
      if (!broker.account(id)) throw new ControlError(404, `no simulated account ${id}`);
      return broker.positions(id).map((p) => ({ id: p.id, symbol: p.symbol, volume: p.volume.toString(), tag: p.tag }));
    }
    // Read-only, for the chaos checker: the account's deals, counted from the broker's books rather than our ledger.
    const deals = /^\/accounts\/([^/]+)\/deals$/.exec(url.pathname);
    if (req.method === 'GET' && deals) {
      const id = decodeURIComponent(deals[1]!);
      if (!broker.account(id)) throw new ControlError(404, `no simulated account ${id}`);
      return broker.deals(id).map((d) => ({
        id: d.id,
        positionId: d.positionId,
        entry: d.entry,
        side: d.side,
        volume: d.volume.toString(),
        time: d.time,
        tag: d.tag,
      }));
    }
    throw new ControlError(404, `no route ${key}`);
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!authorised(req)) return reply(401, { error: 'missing or wrong bearer token' });
    route(req).then(
      (body) => reply(200, body),
      (err: unknown) =>
        reply(err instanceof ControlError ? err.status : 500, {
          error: err instanceof Error ? err.message : String(err),
        }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`,
    close: async () => {
      await eas.stopAll();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
