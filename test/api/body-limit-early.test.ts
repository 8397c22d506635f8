import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 46, finding 9: a client still sending a body over the limit must read the 413 in our error body, not a
 * reset connection. The client here streams 5 MB slowly (as a slow uplink would) and reads whatever comes back.
 */

let svc: TestService;
let key: string;
let master: string;

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  master = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts.find(
    (a: any) => a.role === 'master',
  ).id;
});
afterAll(async () => svc?.close());

const TOTAL = 5 * 1024 * 1024;
const CHUNK = 64 * 1024;

/** Streams 5 MB in 64 KiB chunks, a few ms apart, whatever the server does meanwhile; resolves with what it read. */
function slowUpload(chunked: boolean): Promise<{ text: string; error: string | null; sent: number }> {
  const u = new URL(svc.baseUrl);
  return new Promise((resolve) => {
    // Half-open: a FIN from the server must not stop this client sending, as it would not stop curl.
    const s = connect({ port: Number(u.port), host: '127.0.0.1', allowHalfOpen: true });
    let text = '';
    let error: string | null = null;
    let sent = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve({ text, error, sent });
    };
    s.on('data', (d) => {
      text += String(d);
    });
    s.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    s.on('close', finish);
    s.on('connect', () => {
      s.write(
        `POST /v1/accounts/${master}/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
          'Content-Type: application/json\r\n' +
          (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${TOTAL}\r\n`) +
          '\r\n',
      );
      const piece = Buffer.alloc(CHUNK, 0x20);
      piece[0] = 0x7b; // '{' so the body starts as JSON would
      const tick = () => {
        if (s.destroyed || !s.writable) return;
        if (sent >= TOTAL) {
          if (chunked) s.write('0\r\n\r\n');
          // The whole body is out: give the server a moment to answer, then stop waiting.
          setTimeout(() => s.end(), 500);
          setTimeout(() => {
            s.destroy();
            finish();
          }, 5000);
          return;
        }
        s.write(
          chunked ? Buffer.concat([Buffer.from(`${CHUNK.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece,
        );
        sent += CHUNK;
        setTimeout(tick, 3);
      };
      tick();
    });
  });
}

function statusOf(text: string): number | null {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return m ? Number(m[1]) : null;
}

function bodyOf(text: string): any {
  const at = text.indexOf('\r\n\r\n');
  return JSON.parse(text.slice(at + 4));
}

describe('a body over the limit: the 413 reaches a client that is still sending', () => {
  it('declared by Content-Length: the client reads the 413 and our error body', async () => {
    const r = await slowUpload(false);
    expect(statusOf(r.text), `read: ${JSON.stringify(r.text.slice(0, 200))}, error: ${r.error}`).toBe(413);
    expect(bodyOf(r.text)).toMatchObject({ code: 'payload_too_large', requestId: expect.stringMatching(/^req_/) });
    // The server read (and threw away) the rest: the client could send all of it, and nothing was reset.
    expect(r.sent).toBe(TOTAL);
    expect(r.error).toBeNull();
  }, 30_000);

  it('chunked, with no length: the client reads the 413 and our error body', async () => {
    const r = await slowUpload(true);
    expect(statusOf(r.text), `read: ${JSON.stringify(r.text.slice(0, 200))}, error: ${r.error}`).toBe(413);
    expect(bodyOf(r.text)).toMatchObject({ code: 'payload_too_large' });
    // The server read (and threw away) the rest: the client could send all of it, and nothing was reset.
    expect(r.sent).toBe(TOTAL);
    expect(r.error).toBeNull();
  }, 30_000);

  it('a declared length far over what the server will read: the 413 at once, then the connection closes', async () => {
    const u = new URL(svc.baseUrl);
    const text = await new Promise<string>((resolve) => {
      const s = connect(Number(u.port), '127.0.0.1', () =>
        s.write(
          `POST /v1/accounts/${master}/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n{`,
        ),
      );
      let out = '';
      s.on('data', (d) => {
        out += String(d);
      });
      s.on('error', () => {});
      s.on('close', () => resolve(out));
    });
    expect(statusOf(text)).toBe(413);
    expect(bodyOf(text)).toMatchObject({ code: 'payload_too_large' });
    expect(text.toLowerCase()).toContain('connection: close');
  }, 30_000);

  it('the service still answers afterwards', async () => {
    const r = await svc.call('GET', '/v1/accounts', { token: key });
    expect(r.status).toBe(200);
  });
});
