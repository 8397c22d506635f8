import type { Command } from 'commander';
import type { CopyRulePatch } from '../../client/index.js';
import { AppError } from '../../domain/errors.js';

type Sizing = NonNullable<CopyRulePatch['sizing']>;
export type RuleFlags = Record<string, string | boolean | string[] | undefined>;

const dec = (name: string, v: string): string => {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v))
    throw new AppError('invalid_request', `${name} must be a positive decimal such as 0.5, got ${JSON.stringify(v)}`);
  return v;
};
const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const magics = (name: string, v: string): number[] =>
  list(v).map((m) => {
    if (!/^[0-9]+$/.test(m) || !Number.isSafeInteger(Number(m)))
      throw new AppError('invalid_request', `${name} takes magic numbers such as 1001,2002, got ${JSON.stringify(m)}`);
    return Number(m);
  });
const SIDES = ['both', 'buy', 'sell'] as const;
type Override = NonNullable<CopyRulePatch['symbolOverrides']>[string];
/** `--override XAUUSD:off` or `--override XAUUSD:multiplier=0.5,maxVolume=2` (repeatable), as one map entry. */
function overrideOf(spec: string): [string, Override] {
  const [symbol, rest] = [spec.slice(0, spec.indexOf(':')), spec.slice(spec.indexOf(':') + 1)];
  const bad = () =>
    new AppError(
      'invalid_request',
      `--override takes SYMBOL:off or SYMBOL:multiplier=X|volume=X[,maxVolume=X][,maxSlippagePoints=X], got ${JSON.stringify(spec)}`,
    );
  if (!spec.includes(':') || !symbol) throw bad();
  if (rest === 'off') return [symbol, { copy: false }];
  const o: Record<string, string | boolean> = {};
  for (const kv of list(rest)) {
    const [k, v] = kv.split('=');
    if (!k || !v || !['multiplier', 'volume', 'maxVolume', 'maxSlippagePoints'].includes(k)) throw bad();
    o[k] = dec(`--override ${symbol} ${k}`, v);
  }
  if (Object.keys(o).length === 0) throw bad();
  return [symbol, o as Override];
}
const collect = (v: string, prev: string[] = []) => [...prev, v];

/** The flags that change a copy rule (`rules set`, `rules preview`). */
export function ruleOptions(cmd: Command): Command {
  return cmd
    .option('--multiplier <x>', 'sizing: Master volume times x')
    .option('--fixed <lots>', 'sizing: always this volume')
    .option('--balance-ratio [x]', 'sizing: by the balance ratio (times x)')
    .option('--equity-ratio [x]', 'sizing: by the equity ratio (times x)')
    .option('--risk-percent <p>', "sizing: lose p % of the Slave's equity at the stop")
    .option('--min-volume <lots>')
    .option('--max-volume <lots>')
    .option('--max-slippage <price>', 'skip market copies whose price is worse by more than this')
    .option('--max-slippage-points <points>', "the same in points of each symbol's tick size (50 = 5 pips on EURUSD)")
    .option('--max-delay-ms <ms>', 'skip copies older than this')
    .option('--include <symbols>', 'only these symbols (comma separated)')
    .option('--exclude <symbols>', 'never these symbols (comma separated)')
    .option('--map <pairs>', 'symbol map, e.g. EURUSD=EURUSD.r,XAUUSD=GOLD')
    .option('--symbol-prefix <text>', 'added before the Slave symbol of an unmapped Master symbol ("" for none)')
    .option('--symbol-suffix <text>', 'added after it, e.g. .m: EURUSD -> EURUSD.m ("" for none)')
    .option('--master-symbol-prefix <text>', "taken off the Master's symbol first")
    .option('--master-symbol-suffix <text>', "taken off the Master's symbol first, e.g. .a: EURUSD.a -> EURUSD")
    .option(
      '--override <symbol:rule>',
      'per Master symbol, repeatable: XAUUSD:off, or XAUUSD:multiplier=0.5,maxVolume=2, or US30:volume=0.1 (replaces all overrides)',
      collect,
    )
    .option('--no-overrides', 'remove every per-symbol override')
    .option('--min-trade-amount <amount>', "skip copies worth less than this in the Slave's account currency")
    .option('--sides <which>', "copy the Master's both sides, or buy or sell only")
    .option('--include-magic <numbers>', 'only trades with these magic numbers (comma separated; "" for none)')
    .option('--exclude-magic <numbers>', 'never trades with these magic numbers (comma separated)')
    .option('--include-comment <texts>', 'only trades whose comment contains one of these (comma separated)')
    .option('--exclude-comment <texts>', 'never trades whose comment contains one of these (comma separated)')
    .option('--reverse')
    .option('--no-reverse')
    .option('--copy-sl')
    .option('--no-copy-sl')
    .option('--copy-tp')
    .option('--no-copy-tp')
    .option('--copy-pending')
    .option('--no-copy-pending')
    .option('--body <json>', 'the whole rule patch as JSON (flags above override its fields)');
}

/** The rule patch the flags say (fields not given are left out). */
export function rulePatchOf(o: RuleFlags): CopyRulePatch {
  let patch: CopyRulePatch = {};
  if (typeof o.body === 'string') {
    try {
      patch = JSON.parse(o.body) as CopyRulePatch;
    } catch {
      throw new AppError(
        'invalid_request',
        '--body must be JSON, e.g. {"sizing":{"mode":"multiplier","multiplier":"0.5"}}',
      );
    }
  }
  const sizings: Sizing[] = [];
  if (typeof o.multiplier === 'string')
    sizings.push({ mode: 'multiplier', multiplier: dec('--multiplier', o.multiplier) });
  if (typeof o.fixed === 'string') sizings.push({ mode: 'fixed', volume: dec('--fixed', o.fixed) });
  if (o.balanceRatio !== undefined)
    sizings.push({
      mode: 'balance_ratio',
      ...(typeof o.balanceRatio === 'string' ? { multiplier: dec('--balance-ratio', o.balanceRatio) } : {}),
    });
  if (o.equityRatio !== undefined)
    sizings.push({
      mode: 'equity_ratio',
      ...(typeof o.equityRatio === 'string' ? { multiplier: dec('--equity-ratio', o.equityRatio) } : {}),
    });
  if (typeof o.riskPercent === 'string')
    sizings.push({ mode: 'risk_percent', riskPercent: dec('--risk-percent', o.riskPercent) });
  if (sizings.length > 1)
    throw new AppError(
      'invalid_request',
      'give one sizing: --multiplier, --fixed, --balance-ratio, --equity-ratio or --risk-percent',
    );
  if (sizings[0]) patch.sizing = sizings[0];
  if (typeof o.minVolume === 'string') patch.minVolume = dec('--min-volume', o.minVolume);
  if (typeof o.maxVolume === 'string') patch.maxVolume = dec('--max-volume', o.maxVolume);
  if (typeof o.maxSlippage === 'string') patch.maxSlippage = dec('--max-slippage', o.maxSlippage);
  if (typeof o.maxSlippagePoints === 'string')
    patch.maxSlippagePoints = dec('--max-slippage-points', o.maxSlippagePoints);
  if (typeof o.maxDelayMs === 'string') patch.maxDelayMs = Number(dec('--max-delay-ms', o.maxDelayMs));
  if (typeof o.include === 'string') patch.includeSymbols = list(o.include);
  if (typeof o.exclude === 'string') patch.excludeSymbols = list(o.exclude);
  if (typeof o.map === 'string') {
    patch.symbolMap = Object.fromEntries(
      list(o.map).map((pair) => {
        const [from, to] = pair.split('=');
        if (!from || !to)
          throw new AppError('invalid_request', `--map takes FROM=TO pairs, got ${JSON.stringify(pair)}`);
        return [from, to];
      }),
    );
  }
  for (const k of ['symbolPrefix', 'symbolSuffix', 'masterSymbolPrefix', 'masterSymbolSuffix'] as const)
    if (typeof o[k] === 'string') patch[k] = o[k];
  if (Array.isArray(o.override)) patch.symbolOverrides = Object.fromEntries(o.override.map(overrideOf));
  else if (o.overrides === false) patch.symbolOverrides = {};
  if (typeof o.minTradeAmount === 'string') patch.minTradeAmount = dec('--min-trade-amount', o.minTradeAmount);
  if (typeof o.sides === 'string') {
    const sides = SIDES.find((x) => x === o.sides);
    if (!sides)
      throw new AppError(
        'invalid_request',
        `--sides must be one of ${SIDES.join(', ')}, got ${JSON.stringify(o.sides)}`,
      );
    patch.sides = sides;
  }
  if (typeof o.includeMagic === 'string') patch.includeMagic = magics('--include-magic', o.includeMagic);
  if (typeof o.excludeMagic === 'string') patch.excludeMagic = magics('--exclude-magic', o.excludeMagic);
  if (typeof o.includeComment === 'string') patch.includeComments = list(o.includeComment);
  if (typeof o.excludeComment === 'string') patch.excludeComments = list(o.excludeComment);
  // Commander's --x/--no-x pairs: undefined unless given.
  if (typeof o.reverse === 'boolean') patch.reverse = o.reverse;
  if (typeof o.copySl === 'boolean') patch.copyStopLoss = o.copySl;
  if (typeof o.copyTp === 'boolean') patch.copyTakeProfit = o.copyTp;
  if (typeof o.copyPending === 'boolean') patch.copyPendingOrders = o.copyPending;
  return patch;
}
