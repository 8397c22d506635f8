import type { FastifyInstance } from 'fastify';

/** The most of a refused body the server reads and throws away so that its sender can read the 413. */
export const DRAIN_MAX_BYTES = 8 * 1024 * 1024;
/** How long the server keeps reading a refused body before it gives up on the connection. */
export const DRAIN_MAX_MS = 15_000;

/**
 * A body over the limit is refused as soon as the limit is passed (or at once, when Content-Length says so),
 * while the client may still be sending. Fastify then answers with `Connection: close` and Node closes the
 * socket with the rest of the body unread, which makes the kernel reset the connection: a client still writing
 * gets EPIPE or ECONNRESET and never reads the 413 (issue 46, finding 9).
 *
 * Instead, when what is left is within DRAIN_MAX_BYTES (the declared length says so, or, for a chunked body,
 * until that much has been read), the connection is kept: the answer goes out, the rest of the body is read and
 * discarded, and the connection serves the next request. Past DRAIN_MAX_BYTES or DRAIN_MAX_MS the socket is
 * destroyed; a declared length beyond the bound keeps Fastify's `Connection: close` (nothing is drained).
 */
export function drainRefusedBodies(app: FastifyInstance): void {
  app.addHook('onSend', (req, reply, payload, done) => {
    const raw = req.raw;
    if (reply.statusCode !== 413 || raw.complete || raw.readableEnded) return done(null, payload);
    const declared = Number(raw.headers['content-length']);
    if (Number.isFinite(declared) && declared > DRAIN_MAX_BYTES) {
      reply.header('connection', 'close');
      return done(null, payload);
    }
    reply.removeHeader('connection');
    const socket = raw.socket;
    let read = 0;
    const stop = () => {
      clearTimeout(timer);
      raw.removeListener('data', count);
    };
    const giveUp = () => {
      stop();
      socket.destroy();
    };
    const count = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_MAX_BYTES) giveUp();
    };
    const timer = setTimeout(giveUp, DRAIN_MAX_MS);
    timer.unref();
    raw.on('data', count);
    raw.once('end', stop);
    raw.once('close', stop);
    // Refused on the declared length, Fastify never started reading: the stream is paused until resumed.
    raw.resume();
    done(null, payload);
  });
}
