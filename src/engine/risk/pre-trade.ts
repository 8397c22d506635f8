import { Decimal, floorToStep } from '../../domain/decimal.js';

export interface PreTradeCheckContext {
  /** The copy's volume as sized by its rule (lots). */
  volume: Decimal;
  /** Expected fill: the Master's fill for a market copy, the order price for a pending one. */
  entryPrice: Decimal | null;
  stopLoss: Decimal | null;
  contractSize: Decimal;
  volumeStep: Decimal;
  minVolume: Decimal;
  /** Account-currency value of one unit of the quote currency (1 when they are the same). */
  quoteToAccount: Decimal;
  /** Volume of the positions already open. */
  openVolume: Decimal;
  maxOpenVolume: Decimal | null;
  /** What may still be lost today in account currency (limit minus today's loss); null = no daily limit. */
  remainingDailyLoss: Decimal | null;
  requireStopLoss: boolean;
}

export type PreTradeVerdict =
  | { action: 'allow' }
  | { action: 'shrink'; volume: Decimal; reason: string }
  | { action: 'skip'; reason: string };

/** Prop-firm rule: what the copy loses if its stop loss is hit, in account currency. */
export const lossAtStop = (
  c: Pick<PreTradeCheckContext, 'entryPrice' | 'stopLoss' | 'contractSize' | 'quoteToAccount'>,
  volume: Decimal,
): Decimal | null =>
  c.entryPrice && c.stopLoss
    ? c.entryPrice.minus(c.stopLoss).abs().mul(volume).mul(c.contractSize).mul(c.quoteToAccount)
    : null;

/**
 * Pure: shrinks a copy to what the limits leave room for, or skips it when even the minimum volume would
 * not fit. The result never exceeds the asked volume, stays on the volume step, keeps the loss at the stop
 * within the remaining daily allowance and the open volume within its maximum.
 */
export function preTradeCheck(c: PreTradeCheckContext): PreTradeVerdict {
  let volume = c.volume;
  const reasons: string[] = [];
  if (c.maxOpenVolume !== null) {
    const room = c.maxOpenVolume.minus(c.openVolume);
    if (room.lt(c.minVolume))
      return { action: 'skip', reason: `max_open_volume: ${c.openVolume} of ${c.maxOpenVolume} lots already open` };
    if (volume.gt(room)) {
      volume = floorToStep(room, c.volumeStep);
      reasons.push(`max_open_volume: only ${room} lots left under ${c.maxOpenVolume}`);
    }
  }
  if (c.remainingDailyLoss !== null) {
    if (c.remainingDailyLoss.lte(0))
      return {
        action: 'skip',
        reason: `daily_loss: the daily loss allowance is used up (${c.remainingDailyLoss} left)`,
      };
    const perLot = lossAtStop(c, new Decimal(1));
    if (perLot === null) {
      if (c.requireStopLoss)
        return { action: 'skip', reason: 'daily_loss: the copy has no stop loss, so its loss cannot be bounded' };
    } else if (perLot.gt(0) && perLot.mul(volume).gt(c.remainingDailyLoss)) {
      const fits = floorToStep(c.remainingDailyLoss.div(perLot), c.volumeStep);
      if (fits.lt(c.minVolume))
        return {
          action: 'skip',
          reason: `daily_loss: even ${c.minVolume} lots would lose ${perLot.mul(c.minVolume).toDecimalPlaces(2)} at the stop, ${c.remainingDailyLoss.toDecimalPlaces(2)} is left today`,
        };
      volume = Decimal.min(volume, fits);
      reasons.push(
        `daily_loss: ${c.volume} lots would lose ${perLot.mul(c.volume).toDecimalPlaces(2)} at the stop, ${c.remainingDailyLoss.toDecimalPlaces(2)} is left today`,
      );
    }
  }
  if (volume.lt(c.minVolume)) return { action: 'skip', reason: reasons.join('; ') || 'below the minimum volume' };
  return volume.eq(c.volume) ? { action: 'allow' } : { action: 'shrink', volume, reason: reasons.join('; ') };
}
