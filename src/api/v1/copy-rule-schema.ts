import { Type, type Static, type TSchema } from 'typebox';
import { ruleOnly, withDefaults, type CopyRule } from '../../domain/copy-rule.js';
import { MAX_COMMENT_FILTER } from '../../domain/trade-filters.js';
import { MAX_AFFIX, MAX_OVERRIDES } from '../../domain/symbol-rules.js';
import { OPEN } from '../schemas.js';
import { DecimalIn, decimalIn, decimalInOrNull, numberOut } from '../decimal-json.js';

const Symbols = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 500 });
const MagicNumbers = (description: string) =>
  Type.Array(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), {
    maxItems: 100,
    description,
    'x-open-point': true,
  });
const CommentParts = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: MAX_COMMENT_FILTER }), {
    maxItems: 100,
    description,
    'x-open-point': true,
  });
const Affix = (description: string) =>
  Type.String({ maxLength: MAX_AFFIX, pattern: '^\\S*$', description, 'x-open-point': true });
/** Per-symbol overrides and the symbol affixes (symbol-rules.ts), with the override's decimals as `D`. */
const symbolFields = (D: TSchema) => ({
  symbolOverrides: Type.Record(
    Type.String({ maxLength: 32 }),
    Type.Object(
      {
        copy: Type.Optional(Type.Boolean({ description: 'false: this symbol is not copied (symbol_off)' })),
        multiplier: Type.Optional(D),
        volume: Type.Optional(D),
        maxVolume: Type.Optional(D),
        maxSlippagePoints: Type.Optional(D),
      },
      { additionalProperties: false },
    ),
    {
      maxProperties: MAX_OVERRIDES,
      description:
        'Per Master symbol, over the rule: copy false (symbol_off), or its own multiplier or fixed volume as the sizing, or its own maxVolume',
      'x-open-point': true,
    },
  ),
  symbolPrefix: Affix('Added before the Slave symbol of a Master symbol not in symbolMap'),
  symbolSuffix: Affix('Added after the Slave symbol of a Master symbol not in symbolMap (EURUSD -> EURUSD.m)'),
  masterSymbolPrefix: Affix("Taken off the Master's symbol first, when it begins with it"),
  masterSymbolSuffix: Affix("Taken off the Master's symbol first, when it ends with it (EURUSD.a -> EURUSD)"),
  maxSlippagePoints: Type.Union([D, Type.Null()], {
    description:
      "Market copies: the maxSlippage bound in points of each Slave symbol's tick size (50 = 0.0005 on a 5-digit EURUSD, 0.05 on a 3-digit USDJPY); null = off; not with maxSlippage. Per symbol in symbolOverrides.",
    'x-open-point': true,
  }),
  minTradeAmount: Type.Union([D, Type.Null()], {
    description:
      "Skip a copy (trade_amount_below_minimum) whose value, volume x contract size x price in the Slave's account currency, is below this; null = off",
    'x-open-point': true,
  }),
});
/** The filters on the Master's trade (trade-filters.ts); refused when the Master's platform does not carry them. */
const filterFields = () => ({
  sides: Type.Union([Type.Literal('both'), Type.Literal('buy'), Type.Literal('sell')], {
    description: "Copy the Master's buys and sells (both), or its buys only, or its sells only (side_filtered)",
    'x-open-point': true,
  }),
  includeMagic: MagicNumbers(
    "When non-empty, only the Master's trades with one of these magic numbers are copied (magic_not_included); needs a Master platform with the magicNumber capability",
  ),
  excludeMagic: MagicNumbers("The Master's trades with one of these magic numbers are not copied (magic_excluded)"),
  includeComments: CommentParts(
    "When non-empty, only the Master's trades whose comment contains one of these (case-insensitive) are copied (comment_not_included); needs a Master platform with the orderComment capability",
  ),
  excludeComments: CommentParts(
    "The Master's trades whose comment contains one of these (case-insensitive) are not copied (comment_excluded)",
  ),
});

/** The copy rule's shape, with its decimals as `D` (answers: numbers; requests: number or decimal string). */
function copyRuleSchema(D: TSchema) {
  const ND = Type.Union([D, Type.Null()]);
  const Sizing = Type.Union([
    Type.Object({ mode: Type.Literal('multiplier'), multiplier: D }, { additionalProperties: false }),
    Type.Object({ mode: Type.Literal('fixed'), volume: D }, { additionalProperties: false }),
    Type.Object({ mode: Type.Literal('balance_ratio'), multiplier: Type.Optional(D) }, { additionalProperties: false }),
    Type.Object({ mode: Type.Literal('equity_ratio'), multiplier: Type.Optional(D) }, { additionalProperties: false }),
    Type.Object(
      {
        mode: Type.Literal('risk_percent'),
        riskPercent: D,
      },
      {
        additionalProperties: false,
        description:
          "Volume chosen so the copy loses riskPercent % (at most 100) of the Slave's equity at its stop; needs a stop loss (else skipped: no_stop_loss)",
        'x-open-point': true,
      },
    ),
  ]);
  return Type.Object(
    {
      sizing: Sizing,
      minVolume: ND,
      maxVolume: ND,
      symbolMap: Type.Record(Type.String({ maxLength: 32 }), Type.String({ maxLength: 32 })),
      includeSymbols: Symbols,
      excludeSymbols: Symbols,
      reverse: Type.Boolean(),
      copyStopLoss: Type.Boolean(),
      copyTakeProfit: Type.Boolean(),
      copyPendingOrders: Type.Boolean(),
      maxDelayMs: Type.Integer({ minimum: 0, maximum: 86_400_000 }),
      maxSlippage: Type.Union([D, Type.Null()], {
        description:
          "Market copies: skip (slippage_exceeded) when the Slave's price for the copy's side is worse than the Master's fill by more than this, " +
          'in price units of the Slave symbol (e.g. 0.0005); null = off. Needs a platform that gives quotes.',
        'x-open-point': true,
      }),
      ...filterFields(),
      ...symbolFields(D),
    },
    { ...OPEN, additionalProperties: false },
  );
}
export const CopyRuleSchema = copyRuleSchema(Type.Number());
export const CopyRulePatch = Type.Partial(copyRuleSchema(DecimalIn()), { additionalProperties: false });
type CopyRuleJson = Static<typeof CopyRuleSchema>;

/** A stored rule as an answer carries it: its decimals as JSON numbers. */
/** An override's decimals through `f` (out: JSON numbers; in: exact decimal strings), its `copy` as it is. */
const overridesVia = <T>(o: Record<string, Record<string, unknown>>, f: (v: never) => T) =>
  Object.fromEntries(
    Object.entries(o).map(([sym, x]) => [
      sym,
      Object.fromEntries(Object.entries(x).map(([k, v]) => [k, k === 'copy' ? v : f(v as never)])),
    ]),
  );

export function toCopyRuleJson(stored: CopyRule): CopyRuleJson {
  // A rule stored before a field existed reads with its default (as the planner reads it).
  const r = ruleOnly(withDefaults(stored));
  const s = r.sizing as { mode: string; multiplier?: string; volume?: string; riskPercent?: string };
  const sizing = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, k === 'mode' ? v : numberOut(v)]));
  return {
    ...r,
    sizing,
    minVolume: numberOut(r.minVolume),
    maxVolume: numberOut(r.maxVolume),
    maxSlippage: numberOut(r.maxSlippage),
    minTradeAmount: numberOut(r.minTradeAmount),
    maxSlippagePoints: numberOut(r.maxSlippagePoints),
    symbolOverrides: overridesVia(r.symbolOverrides as Record<string, Record<string, unknown>>, numberOut),
  } as unknown as CopyRuleJson;
}

/** A request's partial rule with its numbers turned into the exact decimal strings the domain keeps. */
export function copyRuleIn(body: Record<string, unknown>): Partial<CopyRule> {
  const out: Record<string, unknown> = { ...body };
  if (body.sizing) {
    const s = body.sizing as Record<string, unknown>;
    out.sizing = Object.fromEntries(
      Object.entries(s).map(([k, v]) => [k, k === 'mode' ? v : decimalIn(v as number | string)]),
    );
  }
  for (const k of ['minVolume', 'maxVolume', 'maxSlippage', 'maxSlippagePoints', 'minTradeAmount'] as const)
    if (k in body) out[k] = decimalInOrNull(body[k] as number | string | null);
  if (body.symbolOverrides)
    out.symbolOverrides = overridesVia(body.symbolOverrides as Record<string, Record<string, unknown>>, decimalIn);
  return out as Partial<CopyRule>;
}
