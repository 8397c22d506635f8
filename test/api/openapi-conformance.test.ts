/**
 * Issue 46, finding 8: a typed client generated from the OpenAPI document met answers the document did not
 * describe. Here the client is generated from the document the running service serves (openapi-typescript, the
 * same generation as `npm run gen:api`, and the committed client must be that output), then openapi-fetch calls
 * every operation the document lists, with the right credential and real ids, and on the cheap error paths
 * (no credential, unknown and over-long ids, a non-JSON, broken or too-large body, a bad limit, a reused or
 * replayed Idempotency-Key). Every answer's status and content type must be declared for its operation. The
 * operations come from the document, and every route the server has must be in it (or on the short list of
 * routes hidden on purpose), so a new route cannot slip past either way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import createClient, { type Middleware } from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { paths } from '../../src/client/schema.js';
import { sample } from '../helpers/openapi-sample.js';
import { startTestService, type TestService } from '../helpers/service.js';

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  operationId: string;
  op: Schema;
  security: Array<Record<string, string[]>>;
  pathParams: string[];
  query: string[];
  body: Schema | undefined;
  idempotent: boolean;
}
interface Seen {
  what: string;
  method: string;
  path: string;
  status: number;
  type: string | null;
  replayed: boolean;
}

const OPS = ['get', 'put', 'post', 'patch', 'delete'];
/** Routes the server has that the document leaves out on purpose, each for its reason. */
const HIDDEN: Array<[RegExp, string]> = [
  [/^\/docs(\/|$)/, 'the reference UI'],
  [/^\/openapi\.json$/, 'the document itself'],
  [/^\/metrics$/, 'operator metrics behind their own token'],
  [/^\/(index\.html|assets\/.*|\*)?$/, "the dashboard's page, its assets and its client-side routes"],
];

/** Where the smallest valid body by the schema is refused by the handler (a 400 is declared, but a success is the point). */
const BODIES: Record<string, unknown> = {
  sendOrder: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
  createWebhookEndpoint: { url: 'http://127.0.0.1:9/conformance' },
};

let svc: TestService;
let doc: Schema;
let operations: Operation[];
const ids: Record<string, string> = {};
const cred = { key: '', token: '', spareToken: '' };
const seen: Seen[] = [];
let current = '';

const recorder: Middleware = {
  onResponse({ request, response, schemaPath }) {
    seen.push({
      what: current,
      method: request.method.toLowerCase(),
      path: schemaPath,
      status: response.status,
      type: response.headers.get('content-type'),
      replayed: response.headers.get('idempotent-replayed') === 'true',
    });
  },
};
let client: ReturnType<typeof createClient<paths>>;

function operationsOf(d: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(d.paths as Record<string, Schema>)) {
    for (const method of OPS) {
      const op = item[method];
      if (!op) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])] as Schema[];
      out.push({
        method,
        path,
        operationId: op.operationId,
        op,
        security: op.security ?? d.security ?? [],
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema,
        idempotent: params.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'),
      });
    }
  }
  return out;
}

const idFor = (op: Operation, param: string): string => {
  if (param === 'id') return op.path.startsWith('/api/platformc/') ? ids.platformc! : ids.platformb!;
  const id = ids[param];
  if (!id) throw new Error(`${op.operationId}: no id for {${param}}; make one in this test's set-up`);
  return id;
};

interface CallOpts {
  token?: string | null;
  path?: (param: string) => string;
  query?: Record<string, string>;
  body?: unknown;
  raw?: { text: string; type: string };
  headers?: Record<string, string>;
}

/** One call through the generated client; the recorder keeps what came back. */
async function call(op: Operation, what: string, o: CallOpts = {}): Promise<Response> {
  current = `${op.operationId} (${op.method.toUpperCase()} ${op.path}): ${what}`;
  const token =
    o.token === null
      ? undefined
      : (o.token ??
        (op.security.length === 0 ? undefined : op.security.some((s) => 'apiKey' in s) ? cred.key : cred.token));
  const path = Object.fromEntries(op.pathParams.map((p) => [p, (o.path ?? ((x) => idFor(op, x)))(p)]));
  const headers: Record<string, string> = {
    accept: op.operationId === 'streamEvents' ? 'text/event-stream' : 'application/json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(o.headers ?? {}),
  };
  const init: Record<string, unknown> = { params: { path, query: o.query ?? {} }, headers, parseAs: 'stream' };
  if (o.raw) {
    init.body = o.raw.text;
    init.bodySerializer = (b: unknown) => b;
    headers['content-type'] = o.raw.type;
  } else if (o.body !== undefined) init.body = o.body;
  const r = await (client.request as (m: string, p: string, i: unknown) => Promise<{ response: Response }>)(
    op.method,
    op.path,
    init,
  );
  // The body is not needed (the stream's would never end): drop it so the connection is free.
  await r.response.body?.cancel().catch(() => undefined);
  return r.response;
}

beforeAll(async () => {
  svc = await startTestService({ env: { COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } });
  cred.key = svc.demo!.apiKey;
  cred.token = svc.demo!.accessToken;
  doc = (await svc.call('GET', '/openapi.json')).body;
  operations = operationsOf(doc);
  client = createClient<paths>({ baseUrl: svc.baseUrl });
  client.use(recorder);

  const accounts = (await svc.call('GET', '/v1/accounts', { token: cred.key })).body.accounts as Schema[];
  const master = accounts.find((a) => a.role === 'master' && a.platform === 'sim')!;
  ids.platformb = accounts.find((a) => a.platform === 'platformb')!.id;
  ids.platformc = accounts.find((a) => a.platform === 'platformc')!.id;
  ids.account_id = master.id;
  ids.group_id = master.groupId;
  const order = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
    token: cred.key,
    body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
  });
  ids.trade_id = order.body.tradeId;
  const positions = await vi.waitFor(
    async () => {
      const list = (await svc.call('GET', `/v1/accounts/${master.id}/positions`, { token: cred.key })).body.positions;
      if (!list?.length) throw new Error('no position yet');
      return list as Schema[];
    },
    { timeout: 10_000, interval: 50 },
  );
  ids.position_id = positions[0]!.id;
  // A Slave's copy of that order ends in a receipt (the receipt routes' {receipt_id} and {day}).
  const slave = accounts.find((a) => a.role === 'slave' && a.groupId === master.groupId)!;
  const receipt = await vi.waitFor(
    async () => {
      const list = (await svc.call('GET', `/v1/accounts/${slave.id}/receipts`, { token: cred.key })).body.receipts;
      if (!list?.length) throw new Error('no receipt yet');
      return list[0] as Schema;
    },
    { timeout: 10_000, interval: 50 },
  );
  ids.receipt_id = receipt.receiptId;
  ids.day = receipt.day;
  await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
    token: cred.key,
    body: { symbol: 'EURUSD', side: 'buy', volume: 0.1, type: 'limit', price: 0.5 },
  });
  const orders = (await svc.call('GET', `/v1/accounts/${master.id}/orders`, { token: cred.key })).body.orders;
  ids.order_id = orders[0]?.id ?? positions[0]!.id;
  const empty = await svc.call('POST', '/v1/copier-groups', { token: cred.key, body: { name: 'empty' } });
  ids.job_id = (
    await svc.call('POST', `/v1/copier-groups/${empty.body.id}/panic-close`, { token: cred.key })
  ).body.jobId;
  ids.endpoint_id = (
    await svc.call('POST', '/v1/webhook-endpoints', { token: cred.key, body: { url: 'http://127.0.0.1:9/hook' } })
  ).body.id;
  // An alert channel (the alert routes' {channel_id}); demo mode without SMTP: its test reaches the demo inbox.
  ids.channel_id = (
    await svc.call('POST', '/v1/alert-channels', {
      token: cred.key,
      body: { kind: 'email', email: 'conformance@example.test' },
    })
  ).body.id;
  // A user with a role on the account (the sharing routes' {user_id}).
  ids.user_id = (await svc.deps.auth.createUser('conformance-viewer@example.test', 'correct horse battery')).id;
  await svc.call('POST', `/v1/accounts/${master.id}/grants`, {
    token: cred.key,
    body: { user: ids.user_id, role: 'read_only' },
  });
  ids.key_id = (await svc.call('POST', '/app/api-keys', { token: cred.token, body: { name: 'spare' } })).body.key.id;
  ids.connection_id = (
    await svc.call('POST', '/api/connect/platformc/start', { token: cred.token, body: {} })
  ).body.connectionId;
  // A self-hosted MetaTrader account and its terminal bridge token (the bridge routes' {token_id}).
  const bridged = await svc.call('POST', '/api/connect/platforma/bridge', {
    token: cred.token,
    body: { server: 'SimA-Conformance', login: '99456' },
  });
  expect(bridged.status).toBe(201);
  ids.token_id = bridged.body.token.tokenId;
  ids.name = 'conformance';
  // Sign-out ends the session it is called with: a second one of the demo user's.
  cred.spareToken = (
    await svc.call('POST', '/app/sign-in', { body: { email: svc.demo!.email, password: svc.demo!.password } })
  ).body.accessToken;
}, 120_000);
afterAll(async () => svc?.close());

/** Whether an answer is one the document declares for its operation: status, then content type. */
function undeclared(s: Seen): string | null {
  const op = doc.paths[s.path]?.[s.method];
  if (!op) return `${s.what}: ${s.method.toUpperCase()} ${s.path} is not in the document`;
  const res = op.responses?.[String(s.status)] ?? op.responses?.[`${String(s.status)[0]}XX`] ?? op.responses?.default;
  if (!res) return `${s.what}: status ${s.status} is not declared (declared: ${Object.keys(op.responses ?? {})})`;
  if (s.replayed && !res.headers?.['Idempotent-Replayed'])
    return `${s.what}: ${s.status} is a replay (Idempotent-Replayed), which the document does not declare`;
  const media = s.type === null ? null : (s.type.split(';')[0] ?? '').trim();
  const declared = Object.keys(res.content ?? {});
  if (media === null) return null;
  if (!declared.includes(media))
    return `${s.what}: ${s.status} came as ${media}; declared: ${declared.length ? declared.join(', ') : 'no body'}`;
  return null;
}

describe('the OpenAPI document describes every answer (issue 46, finding 8)', () => {
  it('the committed typed client is what openapi-typescript generates from the served document', async () => {
    // The types, not the prose: a description may quote this process's settings (a test's shorter overlap).
    const types = (ts: string) =>
      ts
        .replace(/\/\*\*[\s\S]*?\*\//g, '')
        .replace(/\n\s*\n/g, '\n')
        .trim();
    const generated = astToString(await openapiTS(doc as never, { alphabetize: true }));
    const committed = readFileSync(join(import.meta.dirname, '../../src/client/schema.d.ts'), 'utf8');
    expect(types(committed), 'run npm run gen:api').toBe(types(generated));
  });

  it('every route the server has is in the document, or hidden on purpose', () => {
    const documented = new Set(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`));
    const routes: string[] = [];
    const stack: string[] = [];
    for (const line of svc.servers[0]!.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^([│ ]*)[├└]── (.*?)(?: \(([^)]+)\))?$/.exec(line);
      if (!m) continue;
      const depth = m[1]!.length / 4;
      stack.length = depth;
      stack.push(m[2]!);
      const url = stack.join('').replace(/:([A-Za-z_]+)/g, '{$1}');
      for (const method of (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD' && x !== 'OPTIONS'))
        routes.push(`${method} ${url}`);
    }
    expect(routes.length).toBeGreaterThan(operations.length);
    const missing = routes.filter((r) => !documented.has(r) && !HIDDEN.some(([re]) => re.test(r.split(' ')[1]!)));
    expect(missing).toEqual([]);
  });

  it('every operation, on its success and cheap error paths, answers only what it declares', async () => {
    const writes = operations.filter((o) => o.method !== 'get');
    // Error paths first: they change nothing.
    for (const op of operations) {
      if (op.security.length > 0) expect((await call(op, 'no credential', { token: null })).status).toBe(401);
      if (op.pathParams.length > 0) {
        await call(op, 'unknown id', { path: (p) => `${idFor(op, p).slice(0, -6)}zzzzzz` });
        // 414 where routing gives up on it; a GET may instead fall through to the dashboard's catch-all (404).
        await call(op, 'over-long id', { path: () => 'x'.repeat(300) });
      }
      if (op.query.includes('limit')) await call(op, 'bad limit', { query: { limit: 'many' } });
    }
    // (The connect routes count these too: past their limit they answer 429, which must be declared as well.)
    const big = JSON.stringify({ pad: 'x'.repeat(70 * 1024) });
    for (const op of writes) {
      await call(op, 'text/plain body', { raw: { text: 'hello', type: 'text/plain' } });
      await call(op, 'broken JSON', { raw: { text: '{"a":', type: 'application/json' } });
      await call(op, 'too large', { raw: { text: big, type: 'application/json' } });
    }

    // Success paths with real ids and the documented sample body: reads first, deletions last.
    // Panic-close would close the position and the order the calls on them need: it runs after other writes.
    const order = (o: Operation) =>
      o.operationId === 'signOut'
        ? 4
        : o.method === 'delete'
          ? 3
          : o.operationId.startsWith('panicClose')
            ? 2
            : o.method === 'get'
              ? 0
              : 1;
    let firstKey: string | null = null;
    for (const op of [...operations].sort((a, b) => order(a) - order(b))) {
      const body = BODIES[op.operationId] ?? (op.body ? sample(op.body) : undefined);
      const opts: CallOpts = { ...(body !== undefined ? { body } : {}) };
      if (op.operationId === 'signOut') opts.token = cred.spareToken;
      // Every write is sent with an Idempotency-Key, declared or not: a replay the document does not declare fails.
      if (op.method === 'get') {
        await call(op, 'as documented', opts);
        continue;
      }
      const key = `conformance-${op.operationId}`;
      const first = await call(op, 'as documented, with an Idempotency-Key', {
        ...opts,
        headers: { 'idempotency-key': key },
      });
      const again = await call(op, 'the same request again', { ...opts, headers: { 'idempotency-key': key } });
      if (op.idempotent && first.status !== 429) expect(again.headers.get('idempotent-replayed'), current).toBe('true');
      // Another operation's key: the request differs, so it is refused rather than run or replayed.
      if (firstKey)
        await call(op, "another request's Idempotency-Key", { ...opts, headers: { 'idempotency-key': firstKey } });
      firstKey ??= key;
    }

    const problems = seen.map(undeclared).filter((p): p is string => p !== null);
    expect(problems).toEqual([]);
    // Every operation was called, and the common answers were met, not only declared.
    expect(new Set(seen.map((s) => `${s.method} ${s.path}`))).toEqual(
      new Set(operations.map((o) => `${o.method} ${o.path}`)),
    );
    const statuses = new Set(seen.map((s) => s.status));
    for (const s of [200, 201, 202, 204, 400, 401, 404, 413, 414, 415, 422])
      expect(statuses, `status ${s}`).toContain(s);
    expect(seen.some((s) => s.replayed)).toBe(true);
  }, 120_000);
});
