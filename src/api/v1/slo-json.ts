import { Type } from 'typebox';
import { DRIFT_GRADES } from '../../domain/slo/levels.js';
import { WINDOW_MINUTES, type SloTarget } from '../../domain/slo/target.js';
import type { SloBreachRow } from '../../store/repos/slo.js';
import { OPEN } from '../schemas.js';

const NNum = Type.Union([Type.Number(), Type.Null()]);
const Grade = Type.Union([Type.Literal('ok'), Type.Literal('minor'), Type.Literal('major'), Type.Literal('critical')], {
  description: DRIFT_GRADES.join(' < '),
});

/** What PUT takes: every field optional, left out = not watched (windowMinutes, minCopies: their defaults). */
export const TargetBody = Type.Object(
  {
    latencyP99Ms: Type.Optional(
      Type.Union([
        Type.Number({ exclusiveMinimum: 0, maximum: 86_400_000, description: 'p99 latency, at most this many ms' }),
        Type.Null(),
      ]),
    ),
    latencyP50Ms: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 86_400_000 }), Type.Null()])),
    successPercent: Type.Optional(
      Type.Union([
        Type.Number({ minimum: 0, maximum: 100, description: 'filled / attempted, at least this percent' }),
        Type.Null(),
      ]),
    ),
    maxDriftGrade: Type.Optional(Type.Union([Grade, Type.Null()], { description: 'worst drift grade allowed' })),
    maxSlippagePoints: Type.Optional(
      Type.Union([
        Type.Number({ minimum: 0, maximum: 1_000_000, description: 'mean slippage, at most this many points' }),
        Type.Null(),
      ]),
    ),
    windowMinutes: Type.Optional(
      Type.Integer({
        minimum: WINDOW_MINUTES.min,
        maximum: WINDOW_MINUTES.max,
        description: `rolling window in minutes (default ${WINDOW_MINUTES.default})`,
      }),
    ),
    minCopies: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100_000,
        description: 'fewer attempted copies: latency and success not judged',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TargetSchema = Type.Object({
  latencyP99Ms: NNum,
  latencyP50Ms: NNum,
  successPercent: NNum,
  maxDriftGrade: Type.Union([Grade, Type.Null()]),
  maxSlippagePoints: NNum,
  windowMinutes: Type.Integer(),
  minCopies: Type.Integer(),
});

export const LevelsSchema = Type.Object(
  {
    copies: Type.Integer(),
    latency: Type.Object({ samples: Type.Integer(), p50Ms: NNum, p99Ms: NNum, maxMs: NNum }),
    slippage: Type.Object({ samples: Type.Integer(), meanPoints: NNum, totalAccount: NNum }),
    success: Type.Object({
      attempted: Type.Integer(),
      filled: Type.Integer(),
      failed: Type.Integer(),
      skippedByRule: Type.Integer(),
      inFlight: Type.Integer(),
      percent: NNum,
    }),
    drift: Type.Object({
      plannedNotional: Type.Number(),
      missingNotional: Type.Number(),
      percent: Type.Number(),
      grade: Grade,
    }),
  },
  { description: 'service levels over the period (docs/slo.md)' },
);

export const BreachSchema = Type.Object({
  accountId: Type.String(),
  metric: Type.String(),
  value: Type.Union([Type.Number(), Type.String(), Type.Null()]),
  target: Type.Union([Type.Number(), Type.String(), Type.Null()]),
  detail: Type.String(),
  since: Type.String({ format: 'date-time' }),
});

export const breachJson = (b: SloBreachRow) => {
  const v = b.value as { value?: number | string; target?: number | string; detail?: string };
  return {
    accountId: b.accountId,
    metric: b.metric,
    value: v.value ?? null,
    target: v.target ?? null,
    detail: v.detail ?? '',
    since: b.since.toISOString(),
  };
};

export const GroupSloSchema = Type.Object(
  {
    groupId: Type.String(),
    target: Type.Union([TargetSchema, Type.Null()], { description: 'null: no target set' }),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    group: LevelsSchema,
    slaves: Type.Array(Type.Object({ accountId: Type.String(), name: Type.String(), levels: LevelsSchema })),
    breaches: Type.Array(BreachSchema, { description: 'breaches in progress' }),
  },
  { ...OPEN, description: "A copier group's service-level target, its levels over the target's window, and breaches" },
);

export const ReportSchema = Type.Object(
  {
    accountId: Type.String(),
    groupId: Type.Union([Type.String(), Type.Null()]),
    month: Type.String(),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    currency: Type.Union([Type.String(), Type.Null()]),
    target: Type.Union([TargetSchema, Type.Null()], { description: "the group's target now" }),
    levels: LevelsSchema,
    /** Each target metric judged over the whole month (minCopies applies). */
    met: Type.Union([Type.Boolean(), Type.Null()], { description: 'the month meets the target; null: no target' }),
    missed: Type.Array(Type.String(), { description: 'the metrics the month as a whole breaks' }),
    days: Type.Array(Type.Object({ day: Type.String(), levels: LevelsSchema }), {
      description: 'UTC days with copies, oldest first: the history',
    }),
    breaches: Type.Array(BreachSchema, { description: 'breaches in progress now' }),
  },
  { ...OPEN, description: "A Slave's service levels over a calendar month (UTC)" },
);

export const targetJson = (t: SloTarget) => ({ ...t });
