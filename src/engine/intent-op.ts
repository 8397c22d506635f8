import type { ModifyOrderChange, PlaceOrderRequest } from '../platforms/adapter.js';
import type { Decimal } from '../domain/decimal.js';

/**
 * The broker write one ledger row stands for. Built from the stored row (and its trade and rule) both when
 * the row is first dispatched and when the settle loop picks it up after a timeout or a restart, so the
 * two paths cannot disagree about what was meant.
 */
export type IntentOp =
  | { kind: 'place'; req: PlaceOrderRequest; link: 'position' | 'order'; masterItemId: string | null }
  | { kind: 'close'; positionId: string; volume: Decimal | null; before: Decimal | null }
  | {
      kind: 'modify';
      positionId: string;
      stopLoss: Decimal | null;
      takeProfit: Decimal | null;
      keepSl: boolean;
      keepTp: boolean;
    }
  | { kind: 'modify_order'; orderId: string; change: ModifyOrderChange }
  | { kind: 'cancel'; orderId: string }
  /** The Master's pending order filled: link the Slave's filled copy, or replace a still-pending one at market. */
  | {
      kind: 'fill';
      orderId: string;
      origTag: string | null;
      req: PlaceOrderRequest;
      masterPositionId: string | null;
      fresh: boolean;
    };
