import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../config/logger.js';
import { OneAccessLine } from './access-log.js';

function capture(): { lines: Array<Record<string, any>>; stream: Writable } {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, stream };
}

describe('one access line per request', () => {
  it('writes a single line with the request line, status and time, and keeps query secrets out', async () => {
    const { lines, stream } = capture();
    const app = Fastify({ loggerInstance: createLogger('info', stream), logController: new OneAccessLine() });
    app.get('/x', async () => ({ ok: true }));
    await app.ready();
    const r = await app.inject({
      method: 'GET',
      url: '/x?access_token=s3cr3t-planted',
      headers: { authorization: 'Bearer k' },
    });
    expect(r.statusCode).toBe(200);
    const access = lines.filter((l) => l.msg?.startsWith('request'));
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ msg: 'request completed', req: { method: 'GET' }, res: { statusCode: 200 } });
    expect(access[0]!.req.url.startsWith('/x')).toBe(true);
    expect(typeof access[0]!.responseTime).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('s3cr3t-planted');
    await app.close();
  });

  it('logs nothing for a route whose log level is above info (probes)', async () => {
    const { lines, stream } = capture();
    const app = Fastify({ loggerInstance: createLogger('info', stream), logController: new OneAccessLine() });
    app.get('/healthz', { logLevel: 'warn' }, async () => ({ ok: true }));
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(lines.filter((l) => l.msg === 'request completed')).toHaveLength(0);
    await app.close();
  });
});
