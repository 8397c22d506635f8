import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AttemptRow, EndpointRow } from '../../store/repos/webhooks.js';
import type { ApiDeps } from '../deps.js';
import { invalid } from '../../domain/errors.js';
import { userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { enforceQuota, QUOTA_NOTE } from '../quotas.js';
import { finishPage, NextCursor, pageQuery, readPage } from '../paging.js';
import { WEBHOOKS_PAGE } from '../page-specs.js';

const NStr = Type.Union([Type.String(), Type.Null()]);
const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: 100,
  description: 'event types delivered; empty = all (GET /v1/event-types)',
});

const EndpointSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    description: NStr,
    eventTypes: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    disabledReason: NStr,
    deliveredCursor: Type.Integer({ description: 'events up to this cursor were delivered (or filtered out)' }),
    failingSince: Type.Union([Type.String(), Type.Null()], {
      description: 'first failure of the current failing streak; null when healthy',
    }),
    previousSecretExpiresAt: Type.Union([Type.String(), Type.Null()], {
      description: 'until then the previous secret also signs (rotation overlap)',
    }),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { ...OPEN, description: 'a webhook endpoint; its secret is never shown again after create or rotate' },
);

const WithSecret = Type.Intersect(
  [
    EndpointSchema,
    Type.Object({ secret: Type.String({ description: 'whsec_...: shown this once; verify deliveries with it' }) }),
  ],
  OPEN,
);

const AttemptSchema = Type.Object(
  {
    id: Type.String(),
    endpointId: Type.String(),
    eventId: Type.String(),
    attempt: Type.Integer({
      description: '1.. for scheduled delivery of the event; 0 for a manual send (test, redeliver)',
    }),
    trigger: Type.Union([Type.Literal('scheduled'), Type.Literal('manual')]),
    ok: Type.Boolean(),
    status: Type.Union([Type.Integer(), Type.Null()], {
      description: "the receiver's HTTP status; null when there was no answer",
    }),
    latencyMs: Type.Union([Type.Integer(), Type.Null()]),
    responseSnippet: Type.Union([Type.String(), Type.Null()], { description: 'the first 1 KiB of the answer' }),
    error: NStr,
    nextAttemptAt: NStr,
    createdAt: Type.String(),
  },
  OPEN,
);

/** No `type`, so a request without a body validates too (a typed object schema would reject `undefined`). */
const RotateBody = {
  properties: {
    overlapSeconds: Type.Integer({
      minimum: 0,
      maximum: 7 * 86_400,
      description: 'how long the previous secret keeps signing; default 86400 (configurable)',
    }),
  },
  additionalProperties: false,
  description: 'optional',
} as const;

const Params = Type.Object({ endpoint_id: Type.String({ minLength: 1, maxLength: 64 }) });

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const toEndpointJson = (e: EndpointRow) => ({
  id: e.id,
  url: e.url,
  description: e.description,
  eventTypes: e.eventTypes as string[],
  enabled: e.enabled,
  disabledReason: e.disabledReason,
  deliveredCursor: e.deliveredCursor,
  failingSince: iso(e.failingSince),
  previousSecretExpiresAt:
    e.previousSecretExpiresAt && e.previousSecretExpiresAt > new Date()
      ? e.previousSecretExpiresAt.toISOString()
      : null,
  createdAt: e.createdAt.toISOString(),
  updatedAt: e.updatedAt.toISOString(),
});
const toAttemptJson = (a: AttemptRow) => ({
  id: a.id,
  endpointId: a.endpointId,
  eventId: a.eventId,
  attempt: a.attempt,
  trigger: a.attempt === 0 ? ('manual' as const) : ('scheduled' as const),
  ok: a.ok,
  status: a.status,
  latencyMs: a.latencyMs,
  responseSnippet: a.responseSnippet,
  error: a.error,
  nextAttemptAt: iso(a.nextAttemptAt),
  createdAt: a.createdAt.toISOString(),
});

/** Webhook endpoints: the whole shape is our choice (the spec names webhooks only as a capability). */
export async function webhookRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Webhooks'];
  const base = `${prefix}/webhook-endpoints`;

  r.post(
    base,
    {
      onRequest: auth,
      schema: {
        operationId: 'createWebhookEndpoint',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Add a webhook endpoint; the answer carries its signing secret, shown this once',
        description: QUOTA_NOTE('webhookEndpoints', 'WEBHOOK_ENDPOINTS'),
        body: Type.Object(
          {
            url: Type.String({
              minLength: 1,
              maxLength: 2048,
              description:
                'http(s) URL; private, loopback and link-local targets are refused unless the deployment allows them',
            }),
            description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
            eventTypes: Type.Optional(EventTypes),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 201: WithSecret, ...stdErrors(409) },
      },
    },
    async (req, reply) => {
      enforceQuota(deps.quotas, 'webhookEndpoints', await deps.webhooks.count(userOf(req)));
      const { endpoint, secret } = await deps.webhooks.create(userOf(req), req.body);
      reply.code(201);
      return { ...toEndpointJson(endpoint), secret };
    },
  );

  r.get(
    base,
    {
      onRequest: auth,
      schema: {
        operationId: 'listWebhookEndpoints',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "The caller's webhook endpoints (without secrets)",
        querystring: Type.Object(pageQuery(WEBHOOKS_PAGE), { additionalProperties: false }),
        response: {
          200: Type.Object({ endpoints: Type.Array(EndpointSchema), nextCursor: NextCursor }, OPEN),
          ...stdErrors(),
        },
      },
    },
    async (req, reply) => {
      const page = readPage(req.query, WEBHOOKS_PAGE);
      const rows = await deps.webhooks.list(userOf(req), { after: page.after, limit: page.limit + 1 });
      const { items, nextCursor } = finishPage(req, reply, rows, page, WEBHOOKS_PAGE, (e) => e.id);
      return { endpoints: items.map(toEndpointJson), nextCursor };
    },
  );

  r.get(
    `${base}/:endpoint_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getWebhookEndpoint',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'One webhook endpoint (never its secret)',
        params: Params,
        response: { 200: EndpointSchema, ...stdErrors() },
      },
    },
    async (req) => toEndpointJson(await deps.webhooks.get(userOf(req), req.params.endpoint_id)),
  );

  r.patch(
    `${base}/:endpoint_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'updateWebhookEndpoint',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          'Change url, event filter, description, or enable/disable; re-enabling resumes delivery where it stopped',
        params: Params,
        body: Type.Object(
          {
            url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
            description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
            eventTypes: Type.Optional(EventTypes),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 200: EndpointSchema, ...stdErrors() },
      },
    },
    async (req) => toEndpointJson(await deps.webhooks.update(userOf(req), req.params.endpoint_id, req.body)),
  );

  r.post(
    `${base}/:endpoint_id/rotate-secret`,
    {
      onRequest: auth,
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'New signing secret (shown this once); the old one keeps signing beside it for the overlap',
        params: Params,
        body: RotateBody,
        response: { 200: WithSecret, ...stdErrors() },
      },
    },
    async (req) => {
      const { endpoint, secret } = await deps.webhooks.rotateSecret(
        userOf(req),
        req.params.endpoint_id,
        (req.body as { overlapSeconds?: number } | undefined)?.overlapSeconds,
      );
      return { ...toEndpointJson(endpoint), secret };
    },
  );

  r.delete(
    `${base}/:endpoint_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'deleteWebhookEndpoint',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Remove an endpoint and its attempt history',
        params: Params,
        response: { 204: Type.Null(), ...stdErrors() },
      },
    },
    async (req, reply) => {
      await deps.webhooks.remove(userOf(req), req.params.endpoint_id);
      return reply.code(204).send(null);
    },
  );

  r.post(
    `${base}/:endpoint_id/test`,
    {
      onRequest: auth,
      schema: {
        operationId: 'sendWebhookTestEvent',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Send a webhook.test event now (one attempt, also to a disabled endpoint) and return the attempt',
        params: Params,
        response: { 200: AttemptSchema, ...stdErrors() },
      },
    },
    async (req) => toAttemptJson(await deps.webhooks.sendTest(userOf(req), req.params.endpoint_id)),
  );

  r.post(
    `${base}/:endpoint_id/redeliver`,
    {
      onRequest: auth,
      schema: {
        operationId: 'redeliverEvent',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          'Send one stored event to this endpoint again, now, with its original id; the scheduled delivery is not affected',
        params: Params,
        body: Type.Object({ eventId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        response: { 200: AttemptSchema, ...stdErrors() },
      },
    },
    async (req) => toAttemptJson(await deps.webhooks.redeliver(userOf(req), req.params.endpoint_id, req.body.eventId)),
  );

  r.get(
    `${base}/:endpoint_id/attempts`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listWebhookAttempts',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Delivery attempts of an endpoint, newest first',
        params: Params,
        querystring: Type.Object({
          limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
          before: Type.Optional(Type.String({ maxLength: 64, description: 'an attempt id from the previous page' })),
        }),
        response: { 200: Type.Object({ attempts: Type.Array(AttemptSchema), nextBefore: NStr }, OPEN), ...stdErrors() },
      },
    },
    async (req) => {
      const limit = Number(req.query.limit ?? 50);
      if (limit < 1 || limit > 200)
        throw invalid(`limit must be from 1 to 200, got ${req.query.limit}; page on with nextBefore`);
      const rows = await deps.webhooks.attempts(userOf(req), req.params.endpoint_id, limit, req.query.before);
      return {
        attempts: rows.map(toAttemptJson),
        nextBefore: rows.length === limit ? rows[rows.length - 1]!.id : null,
      };
    },
  );
}
