import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, notFound } from '../../domain/errors.js';
import type { AccountPanicReport as Report, PanicJob } from '../../domain/panic-job.js';
import { ownedAccount, reqGroup, type ApiDeps } from '../deps.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { numberOut } from '../decimal-json.js';

const NStr = Type.Union([Type.String(), Type.Null()]);
const NNum = Type.Union([Type.Number(), Type.Null()]);
const Settled = Type.Union([Type.Literal('answer'), Type.Literal('read'), Type.Null()], {
  description: "how the outcome was known: the broker's answer, or a later read",
});
const ClosedPosition = Type.Object(
  {
    positionId: Type.String(),
    symbol: Type.String(),
    side: Type.String(),
    volume: Type.Number(),
    outcome: Type.String({ description: 'closing, closed, failed or unresolved' }),
    closePrice: NNum,
    error: NStr,
    attempts: Type.Integer(),
    settledBy: Settled,
  },
  OPEN,
);
const CancelledOrder = Type.Object(
  {
    orderId: Type.String(),
    symbol: Type.String(),
    side: Type.String(),
    type: Type.String(),
    volume: Type.Number(),
    outcome: Type.String({ description: 'cancelling, cancelled, gone (no longer pending), failed or unresolved' }),
    error: NStr,
    attempts: Type.Integer(),
    settledBy: Settled,
  },
  OPEN,
);
const AccountPanicReport = Type.Object(
  {
    accountId: Type.String(),
    state: Type.String({ description: 'running, flat or failed' }),
    round: Type.Integer({ description: 'close rounds so far' }),
    closed: Type.Integer(),
    failed: Type.Integer(),
    remaining: Type.Integer({ description: 'open positions left; 0 means the account is flat' }),
    cancelled: Type.Integer(),
    remainingOrders: Type.Integer(),
    error: NStr,
    positions: Type.Array(ClosedPosition),
    orders: Type.Array(CancelledOrder),
  },
  OPEN,
);
const FinalAccount = Type.Intersect([AccountPanicReport, Type.Object({ jobId: Type.String() })], OPEN);
const FinalGroup = Type.Object(
  {
    groupId: Type.String(),
    jobId: Type.String(),
    state: Type.String({ description: 'succeeded or failed' }),
    accounts: Type.Array(AccountPanicReport),
  },
  OPEN,
);

const JobSchema = Type.Object(
  {
    id: Type.String(),
    scope: Type.String({ description: 'account or group' }),
    targetId: Type.String(),
    state: Type.String({
      description: 'running, succeeded (every account flat) or failed (something left after the last round)',
    }),
    cancelPending: Type.Boolean(),
    reason: Type.String(),
    error: NStr,
    totals: Type.Object({
      accounts: Type.Integer(),
      flat: Type.Integer(),
      closed: Type.Integer(),
      failed: Type.Integer(),
      remaining: Type.Integer(),
      cancelled: Type.Integer(),
    }),
    progress: Type.Object({ maxRounds: Type.Integer(), accounts: Type.Array(AccountPanicReport) }),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    finishedAt: NStr,
  },
  { ...OPEN, description: 'A panic-close job: per account and per position, readable while it runs' },
);

const Body = Type.Union([
  Type.Object(
    { cancelPendingOrders: Type.Optional(Type.Boolean({ description: 'also cancel pending orders (default true)' })) },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

/** A report as an answer carries it: volumes and prices as JSON numbers (src/api/decimal-json.ts). */
const reportJson = (r: Report) => ({
  ...r,
  positions: r.positions.map((p) => ({ ...p, volume: numberOut(p.volume)!, closePrice: numberOut(p.closePrice) })),
  orders: r.orders.map((o) => ({ ...o, volume: numberOut(o.volume)! })),
});

const jobJson = (j: PanicJob) => {
  const a = j.progress.accounts;
  const sum = (f: (r: Report) => number) => a.reduce((s, r) => s + f(r), 0);
  return {
    id: j.id,
    scope: j.scope,
    targetId: j.targetId,
    state: j.state,
    cancelPending: j.cancelPending,
    reason: j.progress.reason,
    error: j.error,
    totals: {
      accounts: a.length,
      flat: a.filter((r) => r.state === 'flat').length,
      closed: sum((r) => r.closed),
      failed: sum((r) => r.failed),
      remaining: sum((r) => r.remaining),
      cancelled: sum((r) => r.cancelled),
    },
    progress: { maxRounds: j.progress.maxRounds, accounts: a.map(reportJson) },
    createdAt: j.createdAt.toISOString(),
    updatedAt: j.updatedAt.toISOString(),
    finishedAt: j.finishedAt?.toISOString() ?? null,
  };
};

/** RFC 7240: `Prefer: respond-async` answers 202 at once; `Prefer: wait=N` waits up to N seconds (capped). */
function waitMs(req: FastifyRequest, defaultMs: number): number {
  const prefer = String(req.headers.prefer ?? '').toLowerCase();
  if (/(^|[,;\s])respond-async($|[,;\s])/.test(prefer)) return 0;
  const w = /(?:^|[,;\s])wait=(\d+)/.exec(prefer);
  return w ? Math.min(Number(w[1]) * 1000, 30_000) : defaultMs;
}

export async function panicRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Panic close'];
  const syncWaitMs = deps.panic.syncWaitMs;
  const jobPath = (id: string) => `${o.prefix}/panic-close-jobs/${id}`;

  /** The final report when the job ends within the wait (200), else the running job (202 + Location). */
  const answer = async <T>(
    req: FastifyRequest,
    reply: FastifyReply,
    t0: number,
    started: PanicJob,
    final: (j: PanicJob) => T,
  ): Promise<T | ReturnType<typeof jobJson>> => {
    // The wait counts from the request, not from the job: starting it (locking the accounts) is part of it.
    const job = await deps.panic.wait(started, Math.max(0, waitMs(req, syncWaitMs) - (performance.now() - t0)));
    if (job.state !== 'running') return final(job);
    reply.code(202).header('location', jobPath(job.id));
    return jobJson(job);
  };
  const description =
    'Starts a panic-close job: locks the account(s) (status locked until resumed), closes every position and cancels pending orders (unless cancelPendingOrders is false), retrying until flat. ' +
    'Answers 200 with the final report when the job ends within a short wait (by default the answer comes within 3 s: up to 2 s of waiting for the job to end; `Prefer: wait=N` changes it, `Prefer: respond-async` skips it), else 202 with the job and a Location to poll (getPanicCloseJob).';

  r.post(
    `${o.prefix}/accounts/:account_id/panic-close`,
    {
      onRequest: o.auth,
      schema: {
        operationId: 'panicCloseAccount',
        hide: o.hide,
        tags,
        security: o.security,
        description,
        summary: 'Close all open trades of the account (risk rule, drawdown limit or manual emergency)',
        params: AccountIdParams,
        body: Type.Optional(Body),
        response: { 200: FinalAccount, 202: JobSchema, ...stdErrors(403) },
      },
    },
    async (req, reply) => {
      const t0 = performance.now();
      const a = await ownedAccount(deps, req, req.params.account_id, 'trade');
      const job = await deps.panic.start(a.userId, 'account', a.id, {
        cancelPending: req.body?.cancelPendingOrders ?? true,
      });
      return answer(req, reply, t0, job, (j) => ({ ...reportJson(j.progress.accounts[0]!), jobId: j.id }));
    },
  );

  r.post(
    `${o.prefix}/copier-groups/:group_id/panic-close`,
    {
      onRequest: o.auth,
      schema: {
        operationId: 'panicCloseGroup',
        hide: o.hide,
        tags,
        security: o.security,
        ...OPEN,
        description,
        summary: 'Close all open trades of every account in the copier group',
        params: Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Optional(Body),
        response: { 200: FinalGroup, 202: JobSchema, ...stdErrors(403) },
      },
    },
    async (req, reply) => {
      const t0 = performance.now();
      const { ownerId } = await reqGroup(deps, req, req.params.group_id, 'trade');
      const job = await deps.panic.start(ownerId, 'group', req.params.group_id, {
        cancelPending: req.body?.cancelPendingOrders ?? true,
      });
      return answer(req, reply, t0, job, (j) => ({
        groupId: j.targetId,
        jobId: j.id,
        state: j.state,
        accounts: j.progress.accounts.map(reportJson),
      }));
    },
  );

  r.get(
    `${o.prefix}/panic-close-jobs/:job_id`,
    {
      onRequest: o.auth,
      schema: {
        operationId: 'getPanicCloseJob',
        hide: o.hide,
        tags,
        security: o.security,
        ...OPEN,
        summary: 'A panic-close job with its progress and per-position results (readable while it runs)',
        params: Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: JobSchema, ...stdErrors() },
      },
    },
    async (req) => {
      // A job is read by whoever may read its target: the owner, or a user with a role on the account or group.
      const t = await deps.store.panicJobs.target(req.params.job_id);
      if (!t) throw notFound('panic-close job');
      await (t.scope === 'group'
        ? reqGroup(deps, req, t.targetId, 'read')
        : ownedAccount(deps, req, t.targetId, 'read')
      ).catch((err: unknown) => {
        throw err instanceof AppError && err.code === 'not_found' ? notFound('panic-close job') : err;
      });
      const job = await deps.panic.job(t.userId, req.params.job_id);
      if (!job) throw notFound('panic-close job');
      return jobJson(job);
    },
  );
}
