import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiDeps } from '../deps.js';
import { invalid } from '../../domain/errors.js';
import { userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import {
  ChannelParams,
  ChannelSchema,
  CreateBody,
  DeliverySchema,
  RuleSchema,
  RulesBody,
  toChannelJson,
  toDeliveryJson,
  UpdateBody,
} from './alerts-schemas.js';

/** Built-in alerts (docs/alerts.md): nothing about them is in the spec, so every route is an open point. */
export async function alertRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Alerts'];
  const base = `${prefix}/alert-channels`;
  const common = { hide, tags, security, ...OPEN };
  const svc = deps.alerts;

  r.post(
    base,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'createAlertChannel',
        summary: 'Add an alert channel: an email address, or a Telegram chat with your bot',
        body: CreateBody,
        response: { 201: ChannelSchema, ...stdErrors() },
      },
    },
    async (req, reply) => {
      reply.code(201);
      return toChannelJson(await svc.create(userOf(req), req.body));
    },
  );

  r.get(
    base,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'listAlertChannels',
        summary: "The caller's alert channels (bot tokens masked)",
        response: { 200: Type.Object({ channels: Type.Array(ChannelSchema) }, OPEN), ...stdErrors() },
      },
    },
    async (req) => ({ channels: (await svc.list(userOf(req))).map(toChannelJson) }),
  );

  r.get(
    `${base}/:channel_id`,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'getAlertChannel',
        summary: 'One alert channel',
        params: ChannelParams,
        response: { 200: ChannelSchema, ...stdErrors() },
      },
    },
    async (req) => toChannelJson(await svc.get(userOf(req), req.params.channel_id)),
  );

  r.patch(
    `${base}/:channel_id`,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'updateAlertChannel',
        summary: 'Change where a channel sends, its name, or enable/disable it; a change retries a failing message now',
        params: ChannelParams,
        body: UpdateBody,
        response: { 200: ChannelSchema, ...stdErrors() },
      },
    },
    async (req) => toChannelJson(await svc.update(userOf(req), req.params.channel_id, req.body)),
  );

  r.delete(
    `${base}/:channel_id`,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'deleteAlertChannel',
        summary: 'Remove a channel and its delivery history',
        params: ChannelParams,
        response: { 204: Type.Null(), ...stdErrors() },
      },
    },
    async (req, reply) => {
      await svc.remove(userOf(req), req.params.channel_id);
      return reply.code(204).send(null);
    },
  );

  r.post(
    `${base}/:channel_id/test`,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'sendAlertChannelTest',
        summary: 'Send a test message now (also through a disabled channel) and return the delivery',
        params: ChannelParams,
        response: { 200: DeliverySchema, ...stdErrors() },
      },
    },
    async (req) => toDeliveryJson(await svc.sendTest(userOf(req), req.params.channel_id)),
  );

  r.get(
    `${base}/:channel_id/deliveries`,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'listAlertDeliveries',
        summary: 'Messages sent (and tried) through a channel, newest first',
        params: ChannelParams,
        querystring: Type.Object({
          limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
          before: Type.Optional(Type.String({ maxLength: 64, description: 'a delivery id from the previous page' })),
        }),
        response: {
          200: Type.Object(
            { deliveries: Type.Array(DeliverySchema), nextBefore: Type.Union([Type.String(), Type.Null()]) },
            OPEN,
          ),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      const limit = Number(req.query.limit ?? 50);
      if (limit < 1 || limit > 200)
        throw invalid(`limit must be from 1 to 200, got ${req.query.limit}; page on with nextBefore`);
      const rows = await svc.deliveries(userOf(req), req.params.channel_id, limit, req.query.before);
      return {
        deliveries: rows.map(toDeliveryJson),
        nextBefore: rows.length === limit ? rows[rows.length - 1]!.id : null,
      };
    },
  );

  const Rules = Type.Object({ rules: Type.Array(RuleSchema) }, OPEN);
  r.get(
    `${prefix}/alert-rules`,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'listAlertRules',
        summary: 'Which kinds of event alert (every kind is on until turned off)',
        response: { 200: Rules, ...stdErrors() },
      },
    },
    async (req) => ({ rules: await svc.rules(userOf(req)) }),
  );

  r.put(
    `${prefix}/alert-rules`,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'setAlertRules',
        summary: 'Turn kinds of alert on or off (kinds not named keep their setting)',
        body: RulesBody,
        response: { 200: Rules, ...stdErrors() },
      },
    },
    async (req) => ({ rules: await svc.setRules(userOf(req), req.body.rules) }),
  );
}
