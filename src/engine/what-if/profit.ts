import { Decimal } from '../../domain/decimal.js';
import type { ReplayTrade as Trade } from '../../domain/revisions/replay-types.js';

/** Where a Master position's volume went after one moment: each exit closes `fraction` of what remained. */
export interface Exit {
  fraction: Decimal;
  price: Decimal;
}

const at = (t: Trade): number => (t.actionAt ?? t.createdAt).getTime();
const priceOf = (t: Trade): Decimal | null => t.fillPrice ?? t.price;
const key = (account: string, position: string) => `${account}\u0000${position}`;

/**
 * The exits of the Master positions of a period, from its recorded trades: for a copy made at a trade, the reductions
 * and the close that followed it, each as the share of the remaining volume it closed, at the Master's recorded price.
 */
export class MasterExits {
  private readonly byPosition = new Map<string, Trade[]>();

  constructor(trades: readonly Trade[]) {
    for (const t of trades) {
      if (!t.masterPositionId) continue;
      const k = key(t.masterAccountId, t.masterPositionId);
      const list = this.byPosition.get(k) ?? [];
      list.push(t);
      this.byPosition.set(k, list);
    }
    for (const list of this.byPosition.values()) list.sort((a, b) => at(a) - at(b) || (a.id < b.id ? -1 : 1));
  }

  /** The exits after `trade` on its position, or null while the position is still open (or not in the period). */
  after(trade: Trade): Exit[] | null {
    if (!trade.masterPositionId) return null;
    const list = this.byPosition.get(key(trade.masterAccountId, trade.masterPositionId));
    if (!list) return null;
    let volume = new Decimal(0);
    let seen = false;
    const exits: Exit[] = [];
    for (const t of list) {
      const price = priceOf(t);
      if (t.action === 'open' || t.action === 'increase' || t.action === 'order_filled') volume = volume.plus(t.volume);
      else if (seen && t.action === 'reduce' && price && volume.gt(0)) {
        exits.push({ fraction: Decimal.min(1, t.volume.div(volume)), price });
        volume = volume.minus(t.volume);
      } else if (seen && t.action === 'close' && price) {
        exits.push({ fraction: new Decimal(1), price });
        return exits;
      } else if (t.action === 'reduce') volume = volume.minus(t.volume);
      if (t.id === trade.id) seen = true;
    }
    return null;
  }
}

/**
 * Profit of a copy of `volume` lots entered at `entry`, taken through `exits`, in the Slave's account currency:
 * price move x volume x contract size x quote-to-account rate, summed over the exits.
 */
export function copyProfit(
  side: 'buy' | 'sell',
  volume: Decimal,
  entry: Decimal,
  exits: Exit[],
  contractSize: Decimal,
  toAccount: (exitPrice: Decimal) => Decimal,
): Decimal {
  let remaining = volume;
  let profit = new Decimal(0);
  for (const e of exits) {
    const closed = remaining.times(e.fraction);
    const move = side === 'buy' ? e.price.minus(entry) : entry.minus(e.price);
    profit = profit.plus(move.times(closed).times(contractSize).times(toAccount(e.price)));
    remaining = remaining.minus(closed);
  }
  return profit;
}
