import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../config/logger.js';
import type { Logger } from 'pino';
import { OneAccessLine } from './access-log.js';
import { lazyChildLoggers } from './lazy-child-logger.js';

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

  describe('as the server sets it up: the line through the server logger, request loggers made when used', () => {
    async function server(stream: Writable) {
      const line = new OneAccessLine();
      const app = Fastify({
        loggerInstance: createLogger('info', stream),
        logController: line,
        childLoggerFactory: lazyChildLoggers,
      });
      line.writeThrough(app.log as unknown as Logger);
      app.get('/x', async () => ({ ok: true }));
      app.get('/noisy', async (req) => {
        req.log.warn({ apiKey: 'k3y-planted' }, 'route line');
        return { ok: true };
      });
      app.get('/boom', async () => {
        throw Object.assign(new Error('failed'), { password: 'pa55-planted' });
      });
      app.get('/healthz', { logLevel: 'warn' }, async () => ({ ok: true }));
      await app.ready();
      return app;
    }

    it('writes one line with the request id, the request line and the status, keeping secrets out', async () => {
      const { lines, stream } = capture();
      const app = await server(stream);
      await app.inject({ method: 'GET', url: '/x?access_token=s3cr3t-planted' });
      const access = lines.filter((l) => l.msg?.startsWith('request'));
      expect(access).toHaveLength(1);
      expect(access[0]).toMatchObject({
        msg: 'request completed',
        reqId: expect.stringMatching(/^req-\d+$/),
        req: { method: 'GET' },
        res: { statusCode: 200 },
      });
      // Fastify's res serializer, not the whole reply object.
      expect(Object.keys(access[0]!.res)).toEqual(['statusCode']);
      expect(JSON.stringify(lines)).not.toContain('s3cr3t-planted');
      await app.close();
    });

    it("binds the request id to a route's own line and still redacts it", async () => {
      const { lines, stream } = capture();
      const app = await server(stream);
      await app.inject({ method: 'GET', url: '/noisy' });
      const own = lines.find((l) => l.msg === 'route line');
      const access = lines.find((l) => l.msg === 'request completed');
      expect(own?.reqId).toMatch(/^req-\d+$/);
      expect(own?.reqId).toBe(access?.reqId);
      expect(JSON.stringify(lines)).not.toContain('k3y-planted');
      await app.close();
    });

    it('writes an error line through the redacting logger, and none for a probe above info', async () => {
      const { lines, stream } = capture();
      const app = await server(stream);
      expect((await app.inject({ method: 'GET', url: '/boom' })).statusCode).toBe(500);
      expect(lines.some((l) => l.level === 50 && l.reqId)).toBe(true);
      expect(JSON.stringify(lines)).not.toContain('pa55-planted');
      const before = lines.length;
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      expect(lines.slice(before).filter((l) => l.msg === 'request completed')).toHaveLength(0);
      await app.close();
    });
  });
});
