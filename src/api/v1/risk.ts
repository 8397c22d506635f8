import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { NO_LIMITS, type RiskLimits } from '../../engine/risk/limits.js';
import type { RiskState } from '../../engine/risk/evaluate.js';
import type { RiskRow } from '../../store/repos/risk-limits.js';
import { ownedAccount, reqGroup, type ApiDeps } from '../deps.js';
import { whoOf } from '../plugins/auth.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { DecimalIn, decimalInOrNull, numberOut } from '../decimal-json.js';

const DECIMAL_LIMITS = new Set(['maxDrawdownPercent', 'dailyLossLimit', 'maxOpenVolume']);

const NStr = Type.Union([Type.String(), Type.Null()]);
const NNum = Type.Union([Type.Number(), Type.Null()]);
const LimitFields = {
  maxDrawdownPercent: Type.Optional(
    Type.Union([DecimalIn({ percent: true, description: 'percent of peak equity' }), Type.Null()]),
  ),
  dailyLossLimit: Type.Optional(
    Type.Union([
      DecimalIn({ description: 'largest loss since the start of the trading day, in account currency' }),
      Type.Null(),
    ]),
  ),
  maxOpenVolume: Type.Optional(
    Type.Union([DecimalIn({ description: 'largest total volume (lots) of open positions' }), Type.Null()]),
  ),
  onBreach: Type.Optional(
    Type.Union([Type.Literal('pause'), Type.Literal('close_and_pause'), Type.Null()], {
      description: 'pause copying, or panic-close and lock (default pause)',
    }),
  ),
  dayResetHourUtc: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 23 }), Type.Null()])),
  requireStopLoss: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
};
const Body = Type.Object(
  {
    ...LimitFields,
    resetPeak: Type.Optional(
      Type.Boolean({ description: 'start the drawdown from the current equity (after a breach the user accepts)' }),
    ),
  },
  { additionalProperties: false },
);
const LimitsSchema = Type.Object({
  maxDrawdownPercent: NNum,
  dailyLossLimit: NNum,
  maxOpenVolume: NNum,
  onBreach: NStr,
  dayResetHourUtc: Type.Union([Type.Integer(), Type.Null()]),
  requireStopLoss: Type.Union([Type.Boolean(), Type.Null()]),
});
const StateSchema = Type.Object({
  peakEquity: NNum,
  dayKey: NStr,
  dayStartEquity: NNum,
  lastEquity: NNum,
  lastOpenVolume: NNum,
  sampledAt: NStr,
  lastBreach: Type.Union([
    Type.Object({ rule: Type.String(), detail: Type.String(), at: Type.String(), action: Type.String() }),
    Type.Null(),
  ]),
});
const RiskView = Type.Object(
  {
    targetId: Type.String(),
    scope: Type.String(),
    limits: LimitsSchema,
    state: Type.Union([StateSchema, Type.Null()], {
      description: "the monitor's last sample of an account (null for a group)",
    }),
  },
  { ...OPEN, description: 'Risk limits and, for an account, what the monitor last saw' },
);

/** Answers carry the stored decimal strings as JSON numbers (src/api/decimal-json.ts). */
const limitsJson = (l: RiskLimits) => ({
  ...l,
  maxDrawdownPercent: numberOut(l.maxDrawdownPercent),
  dailyLossLimit: numberOut(l.dailyLossLimit),
  maxOpenVolume: numberOut(l.maxOpenVolume),
});
const stateJson = (s: RiskState) => ({
  ...s,
  peakEquity: numberOut(s.peakEquity),
  dayStartEquity: numberOut(s.dayStartEquity),
  lastEquity: numberOut(s.lastEquity),
  lastOpenVolume: numberOut(s.lastOpenVolume),
});
const view = (targetId: string, scope: string, row: RiskRow<RiskLimits, RiskState> | null) => {
  const state = scope === 'account' ? (row?.state ?? null) : null;
  return { targetId, scope, limits: limitsJson(row?.limits ?? NO_LIMITS), state: state ? stateJson(state) : null };
};

export async function riskRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Risk'];
  const GroupParams = Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) });
  const toLimits = (b: Record<string, unknown>): RiskLimits => ({
    ...NO_LIMITS,
    ...Object.fromEntries(
      Object.entries(b)
        .filter(([k]) => k !== 'resetPeak')
        .map(([k, v]) => [k, DECIMAL_LIMITS.has(k) ? decimalInOrNull(v as number | string | null) : v]),
    ),
  });
  const description =
    'Fields left out are no limit. A group limit applies to each Slave of the group on its own equity; where both set one, the stricter wins. ' +
    'On a breach the monitor pauses copying (status paused) or panic-closes and locks (status locked), and writes risk.triggered; the pre-trade check shrinks or skips copies that would break the daily loss allowance at their stop loss or the open-volume limit.';

  r.put(
    `${prefix}/accounts/:account_id/risk-limits`,
    {
      onRequest: auth,
      schema: {
        operationId: 'setAccountRiskLimits',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "Set an account's risk limits",
        description,
        params: AccountIdParams,
        body: Body,
        response: { 200: RiskView, ...stdErrors(403) },
      },
    },
    async (req) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'manage');
      const limits = toLimits(req.body);
      const row = await deps.risk.setLimits(
        a.userId,
        'account',
        a.id,
        limits,
        req.body.resetPeak ?? false,
        whoOf(req, a.userId),
      );
      return view(a.id, 'account', row);
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/risk-limits`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getAccountRiskLimits',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "An account's risk limits and the monitor's last sample",
        params: AccountIdParams,
        response: { 200: RiskView, ...stdErrors() },
      },
    },
    async (req) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      return view(a.id, 'account', deps.risk.row(a.id) ?? (await deps.risk.repo.get(a.id)));
    },
  );

  r.put(
    `${prefix}/copier-groups/:group_id/risk-limits`,
    {
      onRequest: auth,
      schema: {
        operationId: 'setGroupRiskLimits',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Set the risk limits every Slave of the group gets',
        description,
        params: GroupParams,
        body: Body,
        response: { 200: RiskView, ...stdErrors(403) },
      },
    },
    async (req) => {
      const { ownerId: userId } = await reqGroup(deps, req, req.params.group_id, 'manage');
      const row = await deps.risk.setLimits(
        userId,
        'group',
        req.params.group_id,
        toLimits(req.body),
        false,
        whoOf(req, userId),
      );
      return view(req.params.group_id, 'group', row);
    },
  );

  r.get(
    `${prefix}/copier-groups/:group_id/risk-limits`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getGroupRiskLimits',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "A copier group's risk limits",
        params: GroupParams,
        response: { 200: RiskView, ...stdErrors() },
      },
    },
    async (req) => {
      await reqGroup(deps, req, req.params.group_id, 'read');
      return view(
        req.params.group_id,
        'group',
        deps.risk.row(req.params.group_id) ?? (await deps.risk.repo.get(req.params.group_id)),
      );
    },
  );
}
