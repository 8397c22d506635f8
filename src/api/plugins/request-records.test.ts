import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../store/store.js';
import type { NewRequestRecord } from '../../store/repos/requests.js';
import { requestRecords } from './request-records.js';

/** The hook on its own, with a store that keeps what it is given. */
async function appWith(body: () => unknown) {
  const records: NewRequestRecord[] = [];
  const errors: unknown[] = [];
  const store = { requests: { enqueue: (r: NewRequestRecord) => records.push(r) } } as unknown as Store;
  const app = Fastify();
  requestRecords(app, store, (err) => errors.push(err));
  // Whatever a parser or route leaves in req.body: the record must still be written.
  app.post(
    '/v1/thing',
    {
      preHandler: async (req) => {
        req.body = body();
      },
    },
    async () => ({ ok: true, echo: 'a\u0000b' }),
  );
  await app.ready();
  return { app, records, errors };
}

describe('request records never fail on what a request carried', () => {
  it('a body too deep to serialise still leaves a record of the write (status, route, no digest crash)', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const { app, records, errors } = await appWith(() => deep);
    const res = await app.inject({ method: 'POST', url: '/v1/thing', payload: {} });
    expect(res.statusCode).toBe(200);
    expect(errors).toEqual([]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      method: 'POST',
      route: '/v1/thing',
      status: 200,
      bodyDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('a circular body, and a response holding U+0000 (refused by jsonb), are recorded in a storable form', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const { app, records } = await appWith(() => circular);
    await app.inject({ method: 'POST', url: '/v1/thing', payload: {} });
    expect(records).toHaveLength(1);
    expect(records[0]!.response).toEqual({ ok: true, echo: 'a\uFFFDb' });
  });
});
