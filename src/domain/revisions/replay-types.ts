import type { CopyIntent, Trade } from '../ledger-types.js';

/** The parts of a ledger row a replay reads. */
export type ReplayIntent = Pick<
  CopyIntent,
  | 'id'
  | 'action'
  | 'state'
  | 'skipReason'
  | 'side'
  | 'symbol'
  | 'plannedVolume'
  | 'fillPrice'
  | 'sizingInputs'
  | 'createdAt'
>;
/** The parts of a Master's trade a replay reads. */
export type ReplayTrade = Pick<
  Trade,
  | 'id'
  | 'masterAccountId'
  | 'action'
  | 'symbol'
  | 'side'
  | 'orderType'
  | 'volume'
  | 'price'
  | 'stopLoss'
  | 'takeProfit'
  | 'fillPrice'
  | 'masterPositionId'
  | 'actionAt'
  | 'createdAt'
  | 'masterMagic'
  | 'masterComment'
>;
