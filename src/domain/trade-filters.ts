import type { Capabilities } from './capabilities.js';
import type { Side } from './types.js';

/** Which of the Master's trades a rule copies by their side, before `reverse` turns the copy around. */
export type CopySides = 'both' | 'buy' | 'sell';

/** The rule's filters on the Master's trade (beside the symbol lists), as stored in the copy rule. */
export interface TradeFilters {
  sides: CopySides;
  includeMagic: number[];
  excludeMagic: number[];
  includeComments: string[];
  excludeComments: string[];
}

/** What the filters read of a Master trade: its side, and its magic number and comment where the platform has them. */
export interface FilteredTrade {
  side: Side;
  magic?: number | null;
  comment?: string | null;
}

export type FilterSkip =
  | 'side_filtered'
  | 'magic_excluded'
  | 'magic_not_included'
  | 'comment_excluded'
  | 'comment_not_included';

/** True when the rule filters nothing by side, magic or comment: the planner's fast path. */
export const filtersNothing = (r: TradeFilters): boolean =>
  r.sides === 'both' &&
  r.includeMagic.length === 0 &&
  r.excludeMagic.length === 0 &&
  r.includeComments.length === 0 &&
  r.excludeComments.length === 0;

// Comments are matched as written by people and EAs ("Grid EA v2", "grid ea"): a part of it, case aside.
const hasAny = (comment: string | null | undefined, parts: string[]): string | undefined => {
  if (!comment) return undefined;
  const c = comment.toLowerCase();
  return parts.find((p) => c.includes(p.toLowerCase()));
};

/**
 * Why the rule does not copy this Master trade, or null when it does. A trade without a magic number (or comment)
 * is not in any include list and in no exclude list: an include filter copies only what it can see matches.
 */
export function filterTrade(r: TradeFilters, t: FilteredTrade): { reason: FilterSkip; detail: string } | null {
  if (r.sides !== 'both' && t.side !== r.sides)
    return { reason: 'side_filtered', detail: `the Master's trade is a ${t.side}; the rule copies ${r.sides}s only` };
  const magic = t.magic ?? null;
  if (magic !== null && r.excludeMagic.includes(magic))
    return { reason: 'magic_excluded', detail: `magic number ${magic} is in the rule's excludeMagic` };
  if (r.includeMagic.length > 0 && (magic === null || !r.includeMagic.includes(magic)))
    return {
      reason: 'magic_not_included',
      detail:
        magic === null
          ? "the Master's trade carries no magic number; the rule copies includeMagic only"
          : `magic number ${magic} is not in the rule's includeMagic`,
    };
  const excluded = hasAny(t.comment, r.excludeComments);
  if (excluded !== undefined)
    return { reason: 'comment_excluded', detail: `the comment ${JSON.stringify(t.comment)} contains "${excluded}"` };
  if (r.includeComments.length > 0 && hasAny(t.comment, r.includeComments) === undefined)
    return {
      reason: 'comment_not_included',
      detail: t.comment
        ? `the comment ${JSON.stringify(t.comment)} contains none of the rule's includeComments`
        : "the Master's trade carries no comment; the rule copies includeComments only",
    };
  return null;
}

export const MAX_COMMENT_FILTER = 64;

/** The filters' problems, for validateRule; `master` = the Master's platform capabilities when the group has one. */
export function filterProblems(rule: TradeFilters, master: Capabilities | null): string[] {
  const problems: string[] = [];
  if (!['both', 'buy', 'sell'].includes(rule.sides)) problems.push('sides must be one of both, buy, sell');
  for (const k of ['includeMagic', 'excludeMagic'] as const)
    for (const m of rule[k])
      if (!Number.isSafeInteger(m) || m < 0) problems.push(`${k} must hold non-negative integers, got ${m}`);
  for (const m of rule.includeMagic)
    if (rule.excludeMagic.includes(m)) problems.push(`magic number ${m} is both in includeMagic and excludeMagic`);
  for (const k of ['includeComments', 'excludeComments'] as const)
    for (const c of rule[k])
      if (typeof c !== 'string' || c.trim() === '' || c.length > MAX_COMMENT_FILTER)
        problems.push(`${k} must hold non-empty texts of at most ${MAX_COMMENT_FILTER} characters`);
  if (!master) return problems;
  const magicSet = rule.includeMagic.length > 0 || rule.excludeMagic.length > 0;
  if (magicSet && !master.has.magicNumber)
    problems.push(
      `${rule.includeMagic.length > 0 ? 'includeMagic' : 'excludeMagic'} is set, but the Master's platform ${master.platform} carries no magic number`,
    );
  const commentSet = rule.includeComments.length > 0 || rule.excludeComments.length > 0;
  if (commentSet && !master.has.orderComment)
    problems.push(
      `${rule.includeComments.length > 0 ? 'includeComments' : 'excludeComments'} is set, but the Master's platform ${master.platform} carries no trade comment`,
    );
  return problems;
}
