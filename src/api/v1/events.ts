import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import { AnyEventSchema, catalogue, EVENT_TYPES, envelopeSchema } from '../../events/catalogue.js';
import { toWireEvent } from '../../events/wire.js';
import type { ApiDeps } from '../deps.js';
import { userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { openEventStream, prepareEventStreams } from './event-stream.js';
import { enforceQuota, QUOTA_NOTE } from '../quotas.js';

const CURSOR_NOTE =
  "opaque and the caller's own (another user's cursor is a 400); the same event always has the same cursor, so compare cursors for equality only, never for order";
const Cursor = Type.String({
  pattern: '^(0|[A-Za-z0-9_-]{22})$',
  description: `a cursor from a previous answer or stream message id, or 0 for the first event: ${CURSOR_NOTE}`,
  ...OPEN,
});
const ListedEvent = Type.Intersect(
  [AnyEventSchema, Type.Object({ cursor: Type.String({ description: `resume after this event: ${CURSOR_NOTE}` }) })],
  OPEN,
);
const NOT_A_CURSOR =
  'cursor is not a cursor of your events: pass a cursor or nextCursor from /v1/events, or an id from the stream, unchanged';

/** Event catalogue, replay by cursor, and the live stream (SSE). */
export async function eventRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Events'];
  prepareEventStreams(app);
  /** Open streams per credential (API key or access token) in this process. */
  const openStreams = new Map<string, number>();

  // Each type's envelope as a named component of the OpenAPI document (once, though this module runs per family).
  for (const t of EVENT_TYPES) if (!app.getSchema(`Event.${t}`)) app.addSchema(envelopeSchema(t));

  r.get(
    `${prefix}/event-types`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listEventTypes',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'The event catalogue: every type with its schema version and JSON schema',
        response: {
          200: Type.Object(
            {
              eventTypes: Type.Array(
                Type.Object({
                  type: Type.String(),
                  schemaVersion: Type.Integer(),
                  description: Type.String(),
                  schema: Type.Unknown(),
                }),
              ),
            },
            OPEN,
          ),
          ...stdErrors(),
        },
      },
    },
    async () => ({ eventTypes: catalogue() }),
  );

  r.get(
    `${prefix}/events`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listEvents',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "The caller's events after a cursor, oldest first (replay); page on with nextCursor",
        querystring: Type.Object({
          cursor: Type.Optional(Cursor),
          limit: Type.Optional(
            Type.String({
              pattern: '^[0-9]{1,4}$',
              description: '1..1000, default 100; outside that a 400',
              'x-open-point': true,
            }),
          ),
        }),
        response: {
          200: Type.Object(
            {
              events: Type.Array(ListedEvent),
              nextCursor: Type.String({ description: `pass as cursor for the next page: ${CURSOR_NOTE}` }),
              hasMore: Type.Boolean(),
            },
            OPEN,
          ),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      const user = userOf(req);
      const after = req.query.cursor === undefined ? 0 : deps.eventCursors.decode(user, req.query.cursor);
      if (after === null) throw invalid(NOT_A_CURSOR);
      const limit = Number(req.query.limit ?? 100);
      if (limit < 1 || limit > 1000)
        throw invalid(`limit must be from 1 to 1000, got ${req.query.limit}; page on with nextCursor`);
      const rows = await deps.eventFeed.read(user, after, limit + 1);
      const page = rows.slice(0, limit);
      return {
        events: page.map((e) => ({ ...toWireEvent(e), cursor: deps.eventCursors.encode(user, e.cursor) })),
        nextCursor: deps.eventCursors.encode(user, page.length > 0 ? page[page.length - 1]!.cursor : after),
        hasMore: rows.length > limit,
      };
    },
  );

  r.get(
    `${prefix}/events/stream`,
    {
      onRequest: auth,
      schema: {
        operationId: 'streamEvents',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          "Live stream of the caller's events (text/event-stream): backfill after the cursor, then live; id = cursor, so Last-Event-ID resumes without gap or duplicate. Without a cursor: from now.",
        description: QUOTA_NOTE('eventStreamsPerKey', 'EVENT_STREAMS_PER_KEY'),
        querystring: Type.Object({ cursor: Type.Optional(Cursor) }),
        headers: Type.Object({ 'last-event-id': Type.Optional(Cursor) }),
        response: {
          200: {
            description:
              'text/event-stream of `id: <cursor>`, `event: <type>`, `data: <event JSON>` messages. The data of a message is the envelope of its type, named after it among the components (`event: account.status_changed` carries an AccountStatusChangedEvent), as the webhooks section of this document posts it.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...stdErrors(),
        },
      } as never,
    },
    async (req, reply) => {
      const q = req.query as { cursor?: string };
      const last = req.headers['last-event-id'];
      const from = typeof last === 'string' && last !== '' ? last : q.cursor;
      const user = userOf(req);
      const given = from === undefined ? undefined : deps.eventCursors.decode(user, from);
      if (given === null) throw invalid(NOT_A_CURSOR);
      const start = given ?? (await deps.eventFeed.visibleCursor());
      // Counted and taken in one synchronous step, so simultaneous opens cannot both pass the check.
      // A rotated key in its overlap shares its successor's streams, as it shares its rate budget.
      const credential = req.principal!.rateKey ?? req.principal!.credentialId;
      enforceQuota(deps.quotas, 'eventStreamsPerKey', openStreams.get(credential) ?? 0);
      openStreams.set(credential, (openStreams.get(credential) ?? 0) + 1);
      const release = () => {
        const n = (openStreams.get(credential) ?? 1) - 1;
        if (n > 0) openStreams.set(credential, n);
        else openStreams.delete(credential);
      };
      openEventStream(app, req, reply, {
        feed: deps.eventFeed,
        cursors: deps.eventCursors,
        userId: user,
        cursor: start,
        heartbeatMs: deps.streamHeartbeatMs,
        onEnd: release,
      });
    },
  );
}
