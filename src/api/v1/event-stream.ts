import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EventFeed } from '../../events/feed.js';
import type { EventCursors } from '../../events/cursor-codec.js';
import { toWireEvent } from '../../events/wire.js';

const PAGE = 500;
/** Open streams per server, ended before the server closes (a hijacked response would hold close() open). */
const openStreams = new WeakMap<FastifyInstance, Set<() => void>>();

function registry(app: FastifyInstance): Set<() => void> {
  let set = openStreams.get(app);
  if (!set) {
    const s = new Set<() => void>();
    openStreams.set(app, s);
    app.addHook('preClose', async () => {
      for (const end of [...s]) end();
    });
    set = s;
  }
  return set;
}

/** Call while the app is still being built (hooks cannot be added once it listens). */
export const prepareEventStreams = (app: FastifyInstance): void => void registry(app);

/**
 * Server-sent events of one user's outbox from `cursor` on. It subscribes before it reads, and every read
 * starts from the last cursor written, so an event becoming visible during the backfill is neither lost nor
 * sent twice: the subscription only says "read again".
 */
export function openEventStream(
  app: FastifyInstance,
  req: FastifyRequest,
  reply: FastifyReply,
  o: {
    feed: EventFeed;
    cursors: EventCursors;
    userId: string;
    /** The outbox position to start after (sent out only as the user's opaque cursor). */
    cursor: number;
    heartbeatMs: number;
    onEnd?: () => void;
  },
): void {
  const streams = registry(app);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': req.id,
  });
  res.write(`retry: 2000\n: from cursor ${o.cursors.encode(o.userId, o.cursor)}\n\n`);

  let pos = o.cursor;
  let closed = false;
  let running = false;
  let again = false;

  const end = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(heartbeat);
    streams.delete(end);
    o.onEnd?.();
    res.end();
  };
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });

  const pump = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        for (;;) {
          if (closed) return;
          const rows = await o.feed.read(o.userId, pos, PAGE);
          for (const row of rows) {
            if (closed) return;
            const ok = res.write(
              `id: ${o.cursors.encode(o.userId, row.cursor)}\nevent: ${row.type}\ndata: ${JSON.stringify(toWireEvent(row))}\n\n`,
            );
            pos = row.cursor;
            if (!ok) await drained();
          }
          if (rows.length < PAGE) break;
        }
      } while (again && !closed);
    } catch (err) {
      req.log.warn({ err }, 'event stream ended on a read error; the client resumes from its last id');
      end();
    } finally {
      running = false;
    }
  };

  const unsubscribe = o.feed.onVisible((userId) => {
    if (userId === o.userId) void pump();
  });
  const heartbeat = setInterval(
    () => {
      if (!closed) res.write(': keep-alive\n\n');
    },
    Math.max(100, o.heartbeatMs),
  );
  streams.add(end);
  res.on('close', end);
  void pump();
}
