import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

/**
 * Bad input of every kind gets a 4xx in our error body, never a 5xx, and nothing of it reaches the store
 * (PostgreSQL refuses U+0000 in text and jsonb). The cases are generated from the OpenAPI document, so a
 * route added later is covered without touching this file. Run on both stores.
 */

interface Op {
  method: string;
  path: string;
  token: 'accessToken' | 'apiKey' | null;
  params: string[];
  query: string[];
  bodyProps: string[];
}

const pg = await requirePostgres();
const STORES: Array<[string, boolean]> = [
  ['PGlite', true],
  ['PostgreSQL', pg],
];

/** A raw HTTP/1.1 exchange, for what fetch would refuse to send (bad request lines, huge headers). */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d) => {
      out += String(d);
    });
    s.on('close', () => resolve(out));
    s.on('error', (err) => (out ? resolve(out) : reject(err)));
  });
}

/** node:http keeps the path exactly as given (fetch would normalise bad percent-encoding). */
function rawGet(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'GET', headers }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += String(d);
      });
      res.on('end', () => {
        let body: unknown = null;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const parseHttp = (raw: string) => {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head ?? '')?.[1]);
  let body: any = null;
  try {
    body = JSON.parse(rest.join('\r\n\r\n'));
  } catch {
    body = rest.join('');
  }
  return { status, head: head ?? '', body };
};

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

for (const [storeName, available] of STORES) {
  describe.runIf(available)(`bad input on ${storeName}`, () => {
    let svc: TestService;
    let drop: (() => Promise<void>) | undefined;
    let ops: Op[];
    let slaveId: string;
    const tokenFor = (op: Op) => (op.token ? svc.demo![op.token] : undefined);

    beforeAll(async () => {
      const env: Record<string, string> = { COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' };
      if (storeName === 'PostgreSQL') {
        const db = await tempDatabase();
        drop = db.drop;
        env.DATABASE_URL = db.url;
      }
      svc = await startTestService({ env });
      // Every call here is refused before it connects anything; the spec's limit of 3 would answer 429 instead.
      (svc.deps as { connectLimit: { max: number; windowMs: number } }).connectLimit = {
        max: 1_000_000,
        windowMs: 60_000,
      };
      const doc = (await svc.call('GET', '/openapi.json')).body;
      ops = [];
      for (const [path, byMethod] of Object.entries<any>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(byMethod)) {
          const sec = Object.keys(op.security?.[0] ?? {})[0] as Op['token'] | undefined;
          const params = (op.parameters ?? []) as Array<{ in: string; name: string }>;
          ops.push({
            method: method.toUpperCase(),
            path,
            token: sec ?? null,
            params: params.filter((p) => p.in === 'path').map((p) => p.name),
            query: params.filter((p) => p.in === 'query').map((p) => p.name),
            bodyProps: Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {}),
          });
        }
      }
      const accounts = (await svc.call('GET', '/v1/accounts', { token: svc.demo!.apiKey })).body.accounts;
      slaveId = accounts.find((a: any) => a.role === 'slave' && a.platform === 'sim').id;
    }, 60_000);
    afterAll(async () => {
      await svc?.close();
      await drop?.();
    });

    const fill = (path: string, values: Record<string, string>) =>
      path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? 'unknown_1');

    /** Our error body, with the request id that is also in the header. */
    const expectOurs = (
      r: { status: number; headers: Headers; body: any; text: string },
      status: number,
      code: string,
      what: string,
    ) => {
      expect(r.status, `${what}: ${r.text}`).toBe(status);
      expect(r.body, what).toMatchObject({ code, error: expect.any(String), requestId: r.headers.get('x-request-id') });
    };

    it('the document lists the routes the drive-through covers', () => {
      expect(ops.length).toBeGreaterThan(50);
      expect(ops.filter((o) => o.params.length > 0).length).toBeGreaterThan(30);
    });

    it('U+0000 in any path parameter of any route: 400 invalid_request, before the store', async () => {
      for (const op of ops) {
        for (const p of op.params) {
          const path = fill(op.path, { account_id: slaveId, [p]: '%00' });
          const r = await svc.call(op.method, path, { token: tokenFor(op) });
          expectOurs(r, 400, 'invalid_request', `${op.method} ${path}`);
          expect(r.body.error).toMatch(new RegExp(`${p}.*control character`));
        }
      }
    }, 120_000);

    it('U+0000 (and other control characters) in any query value: 400 invalid_request', async () => {
      for (const op of ops) {
        for (const q of op.query) {
          for (const bad of ['%00', 'a%01b', '%7F']) {
            const path = `${fill(op.path, { account_id: slaveId })}?${q}=${bad}`;
            const r = await svc.call(op.method, path, { token: tokenFor(op) });
            if (op.path === '/api/connect/platformc/callback') {
              // The OAuth popup's page: HTML for the browser, still a 400 and nothing stored.
              expect(r.status, path).toBe(400);
              continue;
            }
            expectOurs(r, 400, 'invalid_request', `${op.method} ${path}`);
            expect(r.body.error).toMatch(new RegExp(`${q}.*control character`));
          }
        }
      }
    }, 120_000);

    it('U+0000 in a body string, a body key or a nested value of any route with a body: 400 invalid_request', async () => {
      const withBody = ops.filter((o) => o.bodyProps.length > 0 || ['POST', 'PUT', 'PATCH'].includes(o.method));
      expect(withBody.length).toBeGreaterThan(20);
      for (const op of withBody) {
        const path = fill(op.path, { account_id: slaveId });
        const first = op.bodyProps[0] ?? 'name';
        for (const body of [
          { [first]: 'a\u0000b' },
          { [`${first}\u0000`]: 1 },
          { [first]: ['ok', { deeper: '\u0000' }] },
        ]) {
          const r = await svc.call(op.method, path, { token: tokenFor(op), body });
          expectOurs(r, 400, 'invalid_request', `${op.method} ${path} ${JSON.stringify(body)}`);
          expect(r.body.error).toMatch(/control character/);
        }
      }
    }, 120_000);

    it('a lone surrogate in a body string (PostgreSQL jsonb refuses it): 400 invalid_request', async () => {
      const r = await svc.call('POST', '/v1/copier-groups', {
        token: svc.demo!.apiKey,
        rawBody: '{"name":"x\\ud800y"}',
      });
      expectOurs(r, 400, 'invalid_request', 'lone surrogate');
      expect(r.body.error).toMatch(/surrogate/);
    });

    it('empty-string and unknown foreign ids are 400 or 404, never a foreign-key 500', async () => {
      const key = svc.demo!.apiKey;
      const token = svc.demo!.accessToken;
      const empty = await svc.call('PUT', `/v1/accounts/${slaveId}/assignment`, {
        token: key,
        body: { groupId: '', role: 'slave' },
      });
      expectOurs(empty, 400, 'invalid_request', 'assignment groupId ""');
      expect(empty.body.error).toMatch(/groupId/);
      const unknown = await svc.call('PUT', `/v1/accounts/${slaveId}/assignment`, {
        token: key,
        body: { groupId: 'grp_nope', role: 'slave' },
      });
      expectOurs(unknown, 404, 'not_found', 'assignment unknown group');
      const viaApp = await svc.call('PUT', `/app/v1/accounts/${slaveId}/assignment`, {
        token,
        body: { groupId: '', role: 'slave' },
      });
      expectOurs(viaApp, 400, 'invalid_request', 'dashboard mirror assignment groupId ""');
      for (const [path, body] of [
        ['/api/connect/platformb/confirm', { connectionId: '', accountId: '1', accountNumber: '1', groupId: '' }],
        [
          '/api/connect/platformc/confirm',
          { connectionId: '', ctidTraderAccountId: '1', accountNumber: '1', environment: 'demo', groupId: '' },
        ],
        ['/api/connect/platforma', { platform: 'mt5', server: 'SimA-Live', login: '1', password: 'x', groupId: '' }],
      ] as const) {
        const r = await svc.call('POST', path, { token, body });
        expectOurs(r, 400, 'invalid_request', `${path} with empty ids`);
      }
      // An empty path segment is no id either.
      const emptySegment = await svc.call('POST', '/v1/accounts//pause', { token: key });
      expect(emptySegment.status).toBeGreaterThanOrEqual(400);
      expect(emptySegment.status).toBeLessThan(500);
      expect(emptySegment.body).toMatchObject({ requestId: emptySegment.headers.get('x-request-id') });
      const events = await svc.call('POST', '/v1/webhook-endpoints/unknown_1/redeliver', {
        token: key,
        body: { eventId: '' },
      });
      expect(events.status).toBeGreaterThanOrEqual(400);
      expect(events.status).toBeLessThan(500);
    });

    it('a deeply nested body is refused with 400 (with or without Idempotency-Key), and the write still leaves a request record', async () => {
      const key = svc.demo!.apiKey;
      const deep = `{"name":${nested(20_000)}}`;
      const plain = await svc.call('POST', '/v1/copier-groups', { token: key, rawBody: deep });
      expectOurs(plain, 400, 'invalid_request', 'deep body');
      expect(plain.body.error).toMatch(/nested/);
      const idem = await svc.call('POST', '/v1/copier-groups', {
        token: key,
        rawBody: deep,
        headers: { 'idempotency-key': `deep-${storeName}` },
      });
      expectOurs(idem, 400, 'invalid_request', 'deep body with Idempotency-Key');
      // A route without a body schema used to run its handler and then lose the record of it.
      const pause = await svc.call('POST', `/v1/accounts/${slaveId}/pause`, { token: key, rawBody: nested(20_000) });
      expectOurs(pause, 400, 'invalid_request', 'deep body on pause');
      const nul = await svc.call('POST', '/v1/copier-groups', { token: key, body: { name: 'n\u0000' } });
      const ids = [plain, idem, pause, nul].map((r) => r.headers.get('x-request-id'));
      await expect
        .poll(
          async () => {
            const recs = (await svc.call('GET', '/v1/requests?limit=200', { token: key })).body.requests as any[];
            return ids.map((id) => recs.find((x) => x.requestId === id)?.status ?? null);
          },
          { timeout: 10_000 },
        )
        .toEqual([400, 400, 400, 400]);
    });

    it('every write that succeeds leaves a request record, whatever its body (within the limits)', async () => {
      const key = svc.demo!.apiKey;
      // 30 levels of nesting are allowed, and record-keeping must not trip over them.
      const pause = await svc.call('POST', `/v1/accounts/${slaveId}/pause`, { token: key, rawBody: nested(30) });
      expect(pause.status, pause.text).toBe(200);
      const resume = await svc.call('POST', `/v1/accounts/${slaveId}/resume`, {
        token: key,
        rawBody: JSON.stringify({ note: 'x'.repeat(60_000) }),
      });
      expect(resume.status, resume.text).toBe(200);
      const ids = [pause, resume].map((r) => r.headers.get('x-request-id'));
      await expect
        .poll(
          async () => {
            const recs = (await svc.call('GET', '/v1/requests?limit=200', { token: key })).body.requests as any[];
            return ids.map((id) => recs.find((x) => x.requestId === id)?.status ?? null);
          },
          { timeout: 10_000 },
        )
        .toEqual([200, 200]);
    });

    it('panic-close, pause and resume take an empty body sent as application/json as no body', async () => {
      const key = svc.demo!.apiKey;
      const headers = { 'content-type': 'application/json' };
      const pause = await svc.call('POST', `/v1/accounts/${slaveId}/pause`, { token: key, rawBody: '', headers });
      expect(pause.status, pause.text).toBe(200);
      const resume = await svc.call('POST', `/v1/accounts/${slaveId}/resume`, { token: key, rawBody: '', headers });
      expect(resume.status, resume.text).toBe(200);
      // Unknown targets: the answer is about the target, not about the empty body.
      const acc = await svc.call('POST', '/v1/accounts/acc_unknown/panic-close', { token: key, rawBody: '', headers });
      expectOurs(acc, 404, 'not_found', 'panic-close account, empty JSON body');
      const grp = await svc.call('POST', '/v1/copier-groups/grp_unknown/panic-close', {
        token: key,
        rawBody: '',
        headers,
      });
      expectOurs(grp, 404, 'not_found', 'panic-close group, empty JSON body');
      // A route that needs a body says so clearly.
      const needs = await svc.call('POST', '/v1/copier-groups', { token: key, rawBody: '', headers });
      expectOurs(needs, 400, 'invalid_request', 'copier group without a body');
      expect(needs.body.error).toMatch(/body is required/);
    });

    it('the OpenAPI document marks the panic-close body optional (the spec: no body), and required bodies required', async () => {
      const doc = (await svc.call('GET', '/openapi.json')).body;
      expect(doc.paths['/v1/accounts/{account_id}/panic-close'].post.requestBody.required).toBe(false);
      expect(doc.paths['/v1/copier-groups/{group_id}/panic-close'].post.requestBody.required).toBe(false);
      expect(doc.paths['/v1/accounts/{account_id}/orders'].post.requestBody.required).toBe(true);
      expect(JSON.stringify(doc)).not.toContain('x-optional-body');
    });

    it('framework errors come back in our body with a request id', async () => {
      const key = svc.demo!.apiKey;
      const badUrl = await rawGet(svc.baseUrl, '/v1/accounts/%E0%A4%A', { authorization: `Bearer ${key}` });
      expect(badUrl.status).toBe(400);
      expect(badUrl.body).toMatchObject({
        code: 'invalid_request',
        error: expect.stringMatching(/percent-encoding/),
        requestId: badUrl.headers['x-request-id'],
      });
      // Longer than any id: no route matches it.
      const longParam = await rawGet(svc.baseUrl, `/v1/accounts/${'a'.repeat(300)}`, {
        authorization: `Bearer ${key}`,
      });
      expect(longParam.status).toBe(404);
      expect(longParam.body).toMatchObject({ code: 'not_found', requestId: longParam.headers['x-request-id'] });
      const port = Number(new URL(svc.baseUrl).port);
      const big = parseHttp(
        await rawExchange(port, `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`),
      );
      expect(big.status).toBe(431);
      expect(big.body).toMatchObject({
        code: 'request_header_too_large',
        error: expect.any(String),
        requestId: expect.stringMatching(/^req_/),
      });
      expect(big.head.toLowerCase()).toContain(`x-request-id: ${big.body.requestId}`);
      const garbage = parseHttp(await rawExchange(port, 'NOT A REQUEST\r\n\r\n'));
      expect(garbage.status).toBe(400);
      expect(garbage.body).toMatchObject({ code: 'invalid_request', requestId: expect.stringMatching(/^req_/) });
      const tooBig = await svc.call('POST', '/v1/copier-groups', {
        token: key,
        rawBody: JSON.stringify({ name: 'x'.repeat(70_000) }),
      });
      expectOurs(tooBig, 413, 'payload_too_large', 'body over the limit');
      const media = await svc.call('POST', '/v1/copier-groups', {
        token: key,
        rawBody: 'name=x',
        headers: { 'content-type': 'text/plain' },
      });
      expectOurs(media, 415, 'unsupported_media_type', 'text/plain body');
      const badJson = await svc.call('POST', '/v1/copier-groups', { token: key, rawBody: '{"name":' });
      expectOurs(badJson, 400, 'invalid_request', 'malformed JSON');
      const proto = await svc.call('POST', '/v1/copier-groups', {
        token: key,
        rawBody: '{"name":"x","__proto__":{"admin":true}}',
      });
      expectOurs(proto, 400, 'invalid_request', '__proto__ key');
      const noRoute = await svc.call('GET', '/v1/nothing', { token: key });
      expectOurs(noRoute, 404, 'not_found', 'unknown route');
      const method = await svc.call('PROPFIND', '/v1/accounts', { token: key });
      expect(method.status).toBeGreaterThanOrEqual(400);
      expect(method.body).toMatchObject({ code: expect.any(String), requestId: method.headers.get('x-request-id') });
    });

    it('nothing above made a 5xx', () => {
      // (Background work such as the reconciler may log its own errors; only answers count here.)
      expect(svc.logs.filter((l) => /"statusCode":5\d\d/.test(l) || l.includes('unhandled error'))).toEqual([]);
    });
  });
}
