import { dec, decOrNull, decText, type Decimal } from '../domain/decimal.js';
import type {
  CopyIntent,
  LinkKind,
  MasterItem,
  NewIntent,
  NewLink,
  NewMasterItem,
  NewTrade,
  PositionLink,
  Trade,
} from '../domain/ledger-types.js';
import type { OrderType, Side } from '../domain/types.js';
import { intentAction } from '../domain/intent-action.js';
import { intentState } from '../domain/intent.js';
import type { copyIntents, masterItems, positionLinks, trades } from './schema.js';

/**
 * Rows of the ledger tables <-> the domain's ledger types (domain/ledger-types.ts). The only place a numeric
 * column's text becomes a Decimal or a Decimal becomes text. Sides, order types and link kinds are read as their
 * unions unchecked: only typed values are ever written to them.
 *
 * The text rule: a Decimal is written as `Decimal.toString()` (what the engine always wrote), and anything
 * that needs a decimal as text (event payloads, the `masterOutcome` JSON) formats it the same way, with
 * `decText`. PostgreSQL keeps a numeric's scale through arithmetic: a link volume resized in SQL (0.15 + 0.05,
 * 0.25 - 0.05) comes back as "0.20", which reads as the Decimal 0.2 and is written out again as "0.2". So the
 * text of a volume no longer depends on which SQL path last touched it; the value never changes.
 */

export type TradeRow = typeof trades.$inferSelect;
export type TradeInsert = typeof trades.$inferInsert;
export type IntentRow = typeof copyIntents.$inferSelect;
export type IntentInsert = typeof copyIntents.$inferInsert;
export type LinkRow = typeof positionLinks.$inferSelect;
export type LinkInsert = typeof positionLinks.$inferInsert;
export type MasterItemRow = typeof masterItems.$inferSelect;
export type MasterItemInsert = typeof masterItems.$inferInsert;

/**
 * Replaces the Decimal fields among `keys` by their text, leaving absent keys absent (a partial update must not
 * write a null it was not given).
 */
function withText<T extends object, R>(o: T, keys: readonly string[]): R {
  const out = { ...o } as Record<string, unknown>;
  for (const k of keys) if (k in out && out[k] !== undefined) out[k] = decText(out[k] as Decimal | null);
  return out as R;
}

const TRADE_DECIMALS = ['volume', 'price', 'stopLoss', 'takeProfit', 'fillPrice'] as const;
const INTENT_DECIMALS = [
  'plannedVolume',
  'plannedPrice',
  'stopLoss',
  'takeProfit',
  'filledVolume',
  'fillPrice',
  'slippage',
] as const;
const LINK_DECIMALS = ['volume'] as const;
const ITEM_DECIMALS = ['volume', 'price', 'stopLoss', 'takeProfit'] as const;

export const tradeFromRow = (r: TradeRow): Trade => ({
  ...r,
  side: r.side as Side,
  orderType: r.orderType as OrderType,
  volume: dec(r.volume),
  price: decOrNull(r.price),
  stopLoss: decOrNull(r.stopLoss),
  takeProfit: decOrNull(r.takeProfit),
  fillPrice: decOrNull(r.fillPrice),
});
export const tradeToRow = (t: NewTrade): TradeInsert => withText(t, TRADE_DECIMALS);
export const tradeSetToRow = (t: Partial<NewTrade>): Partial<TradeInsert> => withText(t, TRADE_DECIMALS);

export const intentFromRow = (r: IntentRow): CopyIntent => ({
  ...r,
  action: intentAction(r.action),
  state: intentState(r.state),
  side: r.side as Side,
  plannedVolume: decOrNull(r.plannedVolume),
  plannedPrice: decOrNull(r.plannedPrice),
  stopLoss: decOrNull(r.stopLoss),
  takeProfit: decOrNull(r.takeProfit),
  filledVolume: decOrNull(r.filledVolume),
  fillPrice: decOrNull(r.fillPrice),
  slippage: decOrNull(r.slippage),
});
export const intentToRow = (i: NewIntent): IntentInsert => withText(i, INTENT_DECIMALS);
export const intentSetToRow = <T extends Partial<NewIntent>>(
  i: T,
): Omit<T, (typeof INTENT_DECIMALS)[number]> & Partial<IntentInsert> => withText(i, INTENT_DECIMALS);

export const linkFromRow = (r: LinkRow): PositionLink => ({
  ...r,
  kind: r.kind as LinkKind,
  volume: decOrNull(r.volume),
});
export const linkToRow = (l: NewLink): LinkInsert => withText(l, LINK_DECIMALS);

export const masterItemFromRow = (r: MasterItemRow): MasterItem => ({
  ...r,
  kind: r.kind as LinkKind,
  side: r.side as Side,
  orderType: r.orderType as OrderType,
  volume: dec(r.volume),
  price: decOrNull(r.price),
  stopLoss: decOrNull(r.stopLoss),
  takeProfit: decOrNull(r.takeProfit),
});
export const masterItemToRow = (it: NewMasterItem): MasterItemInsert => withText(it, ITEM_DECIMALS);
