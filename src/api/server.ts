import { Type } from 'typebox';
import Fastify, { type FastifyInstance, type onRequestAsyncHookHandler } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Logger } from 'pino';
import type { ApiDeps } from './deps.js';
import { errorHandler, sendError } from './errors.js';
import { requireAuth } from './plugins/auth.js';
import { isAppMirror, rewriteAppMirror } from './app/mirror.js';
import { newRequestId, requestRecords } from './plugins/request-records.js';
import { IDEMPOTENT_PREFIXES, idempotency } from './plugins/idempotency.js';
import { documentCommonAnswers } from './openapi-answers.js';
import { inputGuard } from './plugins/input-guard.js';
import { drainRefusedBodies } from './plugins/body-drain.js';
import { documentRateLimits, rateLimiter } from './plugins/rate-limit.js';
import { OneAccessLine } from './access-log.js';
import { lazyChildLoggers } from './lazy-child-logger.js';
import { clientErrorHandler, frameworkErrors } from './framework-errors.js';
import { tradingAccountRoutes } from './trading-accounts/routes.js';
import { sessionRoutes } from './app/session.js';
import { secondFactorRoutes } from './app/second-factor.js';
import { signUpRoutes } from './app/sign-up.js';
import { connectPlatformBRoutes } from './connect/platformb.js';
import { connectPlatformDRoutes } from './connect/platformd.js';
import { connectPlatformCRoutes } from './connect/platformc.js';
import { connectPlatformARoutes } from './connect/platforma.js';
import { connectBridgeRoutes } from './connect/platforma-bridge.js';
import { demoRoutes } from './app/demo.js';
import { demoAlertInboxRoutes } from './app/demo-alert-inbox.js';
import { accountRoutes } from './v1/accounts.js';
import { connectionTestRoutes } from './v1/connection-test.js';
import { groupRoutes } from './v1/groups.js';
import { ledgerRoutes } from './v1/ledger.js';
import { receiptRoutes } from './v1/receipts.js';
import { ruleRevisionRoutes } from './v1/rule-revisions.js';
import { rulePreviewRoutes } from './v1/rule-preview.js';
import { orderRoutes } from './v1/orders.js';
import { panicRoutes } from './v1/panic.js';
import { positionRoutes } from './v1/positions.js';
import { riskRoutes } from './v1/risk.js';
import { shadowRoutes } from './v1/shadow.js';
import { webhookRoutes } from './v1/webhooks.js';
import { alertRoutes } from './v1/alerts.js';
import { eventRoutes } from './v1/events.js';
import { equityRoutes } from './v1/equity.js';
import { historyRoutes } from './v1/history.js';
import { sloRoutes } from './v1/slo.js';
import { sharingRoutes } from './v1/sharing.js';
import type { RouteOpts } from './v1/route-opts.js';
import { eventWebhooks, refResolver } from './openapi-events.js';
import { lazySerializers } from './lazy-serializers.js';
import { opsRoutes, type OpsRoutes } from './ops-routes.js';
import { lazyValidators } from './lazy-validators.js';
import { RouteWarmup, routeWarmups } from './route-warmup.js';

export type Family = 'r' | 'v1';

export interface ServerOptions {
  families: Family[];
  logger: Logger | false;
  bodyLimit?: number;
  /**
   * Reverse proxies whose X-Forwarded-For gives `req.ip` (COPYTRADE_TRUST_PROXY); empty or absent = none, so a
   * client cannot choose its own address by sending the header.
   */
  trustProxy?: string[];
  /** Public base URLs, shown in the OpenAPI document's servers. */
  baseUrl?: string;
  extraRoutes?: (app: FastifyInstance) => Promise<void>;
  /** /metrics and /readyz of this process (absent: not served). */
  ops?: OpsRoutes;
}

/** The route families' paths: /v1, /api and /app (the dashboard's own routes and its mirror of /v1). */
const FAMILY_PATH = /^\/(?:v1|api|app)(?:[/?#]|$)/;

/**
 * The reference UI's CSP: @fastify/swagger-ui's own (its scripts and styles from this origin, plus the hashes of
 * its inline parts) without `upgrade-insecure-requests`, which would send a plain-http demo's page to https.
 */
const docsCsp = (header: string) => header.replace(/\s*upgrade-insecure-requests;?/, '').trim();

/** Where a route's error response schemas wait for the OpenAPI document (see the onRoute hook). */
const DOC_ERRORS = 'x-doc-error-responses';
/** Marks an operation whose body may be left out, until transformObject turns it into requestBody.required: false. */
const OPTIONAL_BODY = 'x-optional-body';

function markOptionalBodies(doc: Record<string, unknown>): Record<string, unknown> {
  for (const ops of Object.values((doc.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>)) {
    for (const op of Object.values(ops)) {
      if (!op || typeof op !== 'object' || !(OPTIONAL_BODY in op)) continue;
      delete op[OPTIONAL_BODY];
      if (op.requestBody) (op.requestBody as { required: boolean }).required = false;
    }
  }
  return doc;
}

const V1_MODULES = [
  accountRoutes,
  connectionTestRoutes,
  orderRoutes,
  panicRoutes,
  groupRoutes,
  ledgerRoutes,
  receiptRoutes,
  ruleRevisionRoutes,
  rulePreviewRoutes,
  webhookRoutes,
  alertRoutes,
  eventRoutes,
  riskRoutes,
  shadowRoutes,
  positionRoutes,
  equityRoutes,
  historyRoutes,
  sloRoutes,
  sharingRoutes,
];

/**
 * One Fastify instance serving the given families. With one port (default) it serves both; with two, main.ts
 * builds one per port. Each serves its own /openapi.json and /docs.
 */
export async function buildServer(deps: ApiDeps, opts: ServerOptions): Promise<FastifyInstance> {
  // Typed as the default instance: route modules take FastifyInstance and must not care which logger is behind it.
  const accessLine = new OneAccessLine();
  const warmup = new RouteWarmup();
  const app = Fastify({
    loggerInstance: opts.logger || undefined,
    logger: opts.logger ? undefined : false,
    genReqId: newRequestId,
    logController: accessLine,
    // Without a logger Fastify skips the child altogether; with one, it is made only when used.
    ...(opts.logger ? { childLoggerFactory: lazyChildLoggers } : {}),
    // The dashboard's mirror of family V: /app/v1/x is served by the /v1/x route with access-token auth.
    ...(opts.families.includes('r') ? { rewriteUrl: rewriteAppMirror } : {}),
    requestIdHeader: false,
    frameworkErrors,
    clientErrorHandler,
    bodyLimit: opts.bodyLimit ?? 64 * 1024,
    trustProxy: opts.trustProxy && opts.trustProxy.length > 0 ? opts.trustProxy : false,
    // validateSchema off: Ajv checks each schema against the JSON Schema meta-schema, which it compiles first, on
    // the first request of a process (160 ms at load 13, 650 ms profiled in the bench scale-10k). The schemas are
    // our TypeBox code, the same on every start; the OpenAPI lint (test/hygiene) reads them all. Validation of
    // requests is unchanged.
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        allErrors: true,
        strict: false,
        // `strict: false` would also turn off Ajv's strictNumbers, and then `type: number` (and integer) takes
        // Infinity and NaN: JSON's `1e309` parses to Infinity and would reach the store (issue 46).
        strictNumbers: true,
        validateSchema: false,
      },
    },
    schemaController: {
      compilersFactory: {
        buildSerializer: lazySerializers(warmup) as never,
        buildValidator: lazyValidators(warmup) as never,
      },
    },
  }) as unknown as FastifyInstance;
  routeWarmups.set(app, warmup);

  if (opts.logger) accessLine.writeThrough(app.log as unknown as Logger);
  app.decorateRequest('principal', null);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) =>
    sendError(req, reply, 404, 'not_found', `no route ${req.method} ${req.url.split('?')[0]}`),
  );
  // A callback hook: every request passes it, and an async one costs a promise and a microtask turn (issue 12).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // Answers of the route families may carry a secret (a new API key, a token, a sign-in or rotation answer):
    // no cache, shared or private, may keep any of them (issue 46, finding 7). Set first, so errors carry it too.
    if (FAMILY_PATH.test(req.url)) reply.header('cache-control', 'no-store');
    done();
  });
  inputGuard(app);
  drainRefusedBodies(app);
  requestRecords(app, deps.store, (err) => app.log.error({ err }, 'request record not written'));
  idempotency(app, deps.store, {
    prefixes: IDEMPOTENT_PREFIXES,
    instanceId: deps.instanceId,
    onError: (err) => app.log.error({ err }, 'idempotency record not written'),
  });

  // Error bodies are built by sendError and need no compiled serializer: keep 4xx/5xx response schemas for the
  // document only. Dozens of routes x ~8 error codes of fast-json-stringify compilation was most of start-up.
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!response) return;
    const errors = Object.fromEntries(Object.entries(response).filter(([code]) => Number(code) >= 400));
    if (Object.keys(errors).length === 0) return;
    for (const code of Object.keys(errors)) delete response[code];
    (route.schema as Record<string, unknown>)[DOC_ERRORS] = errors;
  });

  await app.register(swagger, {
    transform: ({ schema, url }) => {
      const { [DOC_ERRORS]: errors, ...rest } = (schema ?? {}) as Record<string, unknown>;
      // @fastify/swagger marks every request body required; an optional one (Type.Optional) is flagged for transformObject.
      const optionalBody =
        (rest.body as Record<string, unknown> | undefined)?.['~optional'] === true ? { [OPTIONAL_BODY]: true } : {};
      if (!errors) return { schema: { ...rest, ...optionalBody } as never, url };
      return {
        schema: {
          ...rest,
          ...optionalBody,
          response: { ...((rest.response as object) ?? {}), ...(errors as object) },
        } as never,
        url,
      };
    },
    transformObject: (doc) => {
      const openapi = markOptionalBodies((doc as { openapiObject: Record<string, unknown> }).openapiObject);
      if (opts.families.includes('v1')) openapi.webhooks = eventWebhooks();
      // Before the rate limits, so the answers it adds carry the RateLimit headers too.
      documentCommonAnswers(openapi);
      documentRateLimits(openapi);
      return openapi as never;
    },
    refResolver,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'copytrade',
        version: '0.1.0',
        description:
          "Copy-trading service. Family R (/api, signed-in user access token; reference revision 2 October 2026) and family V (/v1, API key). Parts marked x-open-point are our choices where the specification leaves the detail open; see docs/open-points.md. Numbers in family V: answers carry amounts, prices, volumes and percentages as JSON numbers; requests may send our own decimal fields as a number or a decimal string (the order request's volume, stopLoss and takeProfit are numbers, as the specification types them).",
      },
      // Paths carry their family's prefix (/api, /app, /v1), so the server is the origin the document came from.
      servers: [
        { url: opts.baseUrl ?? '/', description: opts.baseUrl ? 'this service' : 'the origin serving this document' },
      ],
      components: {
        securitySchemes: {
          accessToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'signed-in user access token (POST /app/sign-in)',
          },
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'API key created on the developer dashboard (POST /app/api-keys)',
          },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, transformStaticCSP: docsCsp });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        tags: ['Service'],
        security: [],
        'x-open-point': true,
        summary: 'Liveness of the service',
        response: { 200: Type.Object({ ok: Type.Literal(true) }) },
      } as never,
    },
    async () => ({ ok: true }),
  );
  // The public listener serves /metrics only behind the metrics token (a worker's own probes port is not public).
  if (opts.ops) await opsRoutes(app, { ...opts.ops, publicListener: true });

  // Family V's route modules are registered once. The dashboard reaches the same routes under /app/v1 with
  // its access token: the URL is rewritten to /v1 (see rewriteUrl above) and the request is marked, so the
  // auth hook asks for the right credential. One set of routes means one set of compiled schemas.
  const apiKeyAuth = requireAuth(deps.auth, 'api_key');
  const tokenAuth = requireAuth(deps.auth, 'access_token');
  const servesV1 = opts.families.includes('v1');
  // Spec 8.3: family V's rate limits, checked once the caller is known and before the body is even parsed.
  const limit = rateLimiter(app, deps.store, deps.v1Limits);
  const v1Auth: onRequestAsyncHookHandler = async function (req, reply) {
    if (isAppMirror(req.raw) || servesV1) {
      await (isAppMirror(req.raw) ? tokenAuth : apiKeyAuth).call(this, req, reply);
      if (reply.sent) return reply;
      // Synchronous on the embedded store (a boolean): no second await on every request.
      const refused = limit(req, reply);
      if (refused === true || (refused !== false && (await refused))) return reply;
      return;
    }
    // Family V lives on its own port: here its paths exist only through the dashboard's mirror.
    await sendError(req, reply, 404, 'not_found', `no route ${req.method} ${req.url.split('?')[0]}`);
    return reply;
  };
  const v1: RouteOpts = { prefix: '/v1', auth: v1Auth, security: [{ apiKey: [] }], hide: !servesV1 };

  if (opts.families.includes('r')) {
    await tradingAccountRoutes(app, deps);
    await sessionRoutes(app, deps);
    await secondFactorRoutes(app, deps);
    await signUpRoutes(app, deps);
    await connectPlatformBRoutes(app, deps);
    await connectPlatformDRoutes(app, deps);
    await connectPlatformCRoutes(app, deps);
    await connectPlatformARoutes(app, deps);
    await connectBridgeRoutes(app, deps);
    await demoRoutes(app, deps);
    await demoAlertInboxRoutes(app, deps);
    await (await import('./web.js')).webDashboard(app);
  }
  for (const m of V1_MODULES) await m(app, deps, v1);
  if (opts.extraRoutes) await opts.extraRoutes(app);
  return app;
}
