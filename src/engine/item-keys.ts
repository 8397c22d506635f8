import type { MasterAction } from './actions.js';

/**
 * The Master items whose links an action's outcomes write: its position, its pending order, or both for a fill
 * (the fill links the Slaves' positions that the position's later actions follow). A market order whose position the
 * Master's broker did not name (the order route, on some brokers) links a position not known yet: its copies are
 * waited for by every follow-up of the Master until they end.
 */
export function itemKeys(masterAccountId: string, action: MasterAction): string[] {
  const keys: string[] = [];
  if (action.positionId) keys.push(`${masterAccountId}/position/${action.positionId}`);
  else if (action.type === 'market') keys.push(unnamedKey(masterAccountId));
  if (action.orderId) keys.push(`${masterAccountId}/order/${action.orderId}`);
  return keys;
}

/** What a follow-up of `action` waits for: its own items, and any copy of a Master position not named yet. */
export function followKeys(masterAccountId: string, action: MasterAction): string[] {
  const keys = itemKeys(masterAccountId, action);
  if (keys.length > 0 && !keys.includes(unnamedKey(masterAccountId))) keys.push(unnamedKey(masterAccountId));
  return keys;
}

const unnamedKey = (masterAccountId: string) => `${masterAccountId}/position/?`;
