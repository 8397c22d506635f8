import { decText } from '../domain/decimal.js';
import type { Store } from '../store/store.js';
import type { Trade } from '../domain/ledger-types.js';
import type { NewEvent } from '../store/repos/events.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';
import { fanOutApiOrder } from './api-fanout.js';
import { lookupMasterWrite } from './master-lookup.js';

export type RecoveryResult = 'fanned_out' | 'rejected' | 'unknown' | 'skipped';

/** Code of an order-route trade whose Master write was proven never to have reached the broker. */
export const NOT_AT_BROKER = 'not_at_broker';

const WAITING = ['pending', 'unresolved'];

/**
 * Settles an order-route trade whose Master outcome was never written: the route answered 409
 * `write_outcome_unknown` (trade `unresolved`), or the process stopped between sending the Master's order and
 * recording its answer (trade left `pending`). The Master's broker is asked for the trade's tag:
 * - filled (or resting, for a pending order): the fan-out continues under the same trade id, exactly as the
 *   route would have done it (same deterministic intents; recorded at most once, see `recordIntents`);
 * - cancelled or rejected by the broker: `rejected` with the broker's word;
 * - proven absent, and older than `absentAfterMs` (a write still in flight on the wire could arrive later):
 *   `rejected` with code `not_at_broker`; a late arrival revives it (see `reviveIfLate`);
 * - no answer: `unresolved`, tried again on the next pass.
 */
export async function recoverOrderTrade(
  store: Store,
  adapters: AdapterRegistry,
  engine: CopyEngine,
  trade: Trade,
  opts: { absentAfterMs: number },
): Promise<RecoveryResult> {
  if (engine.claims.orderRouteRunning(trade.id)) return 'skipped';
  const master = await store.accounts.byId(trade.masterAccountId);
  if (!master) return 'unknown';
  const adapter = await adapters.forAccount(master).catch(() => null);
  if (!adapter) return markUnresolved(store, trade, 'the Master broker cannot be reached');
  const found = await lookupMasterWrite(adapter, trade.tag);
  const failed = (type: 'order.rejected' | 'order.unresolved', code: string, message: string): NewEvent => ({
    userId: trade.userId,
    accountId: master.id,
    type,
    payload: {
      tradeId: trade.id,
      requestId: trade.requestId,
      symbol: trade.symbol,
      side: trade.side,
      volume: decText(trade.volume),
      code,
      message,
    },
  });
  switch (found.kind) {
    case 'confirmed': {
      const input = {
        symbol: trade.symbol,
        side: trade.side,
        volume: trade.volume,
        type: trade.orderType,
        price: trade.price,
        stopLoss: trade.stopLoss,
        takeProfit: trade.takeProfit,
      };
      // Staleness counts from when the route received the order, as it would have.
      const res = await fanOutApiOrder(
        engine,
        master,
        trade.id,
        trade.tag,
        input,
        found.outcome,
        trade.createdAt.getTime(),
        trade.requestId,
      );
      await res.done;
      return res.recorded ? 'fanned_out' : 'skipped';
    }
    case 'rejected': {
      const { code, message } = found.outcome;
      const ok = await store.trades.updateTradeIf(
        trade.id,
        WAITING,
        { status: 'rejected', masterOutcome: { kind: 'rejected', code, message } },
        [failed('order.rejected', code, message)],
      );
      return ok ? 'rejected' : 'skipped';
    }
    case 'absent': {
      if (engine.clock() - trade.createdAt.getTime() < opts.absentAfterMs)
        return markUnresolved(store, trade, 'not at the broker yet');
      const message =
        "the Master's broker holds no order with this trade's tag: the order never reached it (the service stopped before or while sending it, or the broker lost it); nothing was copied";
      const ok = await store.trades.updateTradeIf(
        trade.id,
        WAITING,
        { status: 'rejected', masterOutcome: { kind: 'rejected', code: NOT_AT_BROKER, message } },
        [failed('order.rejected', NOT_AT_BROKER, message)],
      );
      return ok ? 'rejected' : 'skipped';
    }
    case 'unknown':
      return markUnresolved(store, trade, found.reason);
  }
}

async function markUnresolved(store: Store, trade: Trade, reason: string): Promise<RecoveryResult> {
  if (trade.status === 'pending') {
    const message = `the service stopped before the Master broker's answer was recorded; looking the order up by its tag: ${reason}`;
    await store.trades.updateTradeIf(
      trade.id,
      ['pending'],
      { status: 'unresolved', masterOutcome: { kind: 'unresolved', code: 'outcome_unknown', message } },
      [
        {
          userId: trade.userId,
          accountId: trade.masterAccountId,
          type: 'order.unresolved',
          payload: {
            tradeId: trade.id,
            requestId: trade.requestId,
            symbol: trade.symbol,
            side: trade.side,
            volume: decText(trade.volume),
            code: 'outcome_unknown',
            message,
          },
        },
      ],
    );
  }
  return 'unknown';
}

/**
 * The watcher found a Master position or order carrying the tag of an order-route trade. If that trade was
 * closed as never having reached the broker, the order arrived late after all: it goes back to `unresolved`
 * so the settle loop fans it out (it is copied if still fresh by each rule, recorded as stale otherwise).
 */
export async function reviveIfLate(store: Store, trade: Trade): Promise<void> {
  const code = (trade.masterOutcome as { code?: string } | null)?.code;
  if (trade.source !== 'api' || trade.status !== 'rejected' || code !== NOT_AT_BROKER) return;
  const message = 'the order reached the Master broker after it had been looked up and not found: settling it now';
  await store.trades.updateTradeIf(
    trade.id,
    ['rejected'],
    { status: 'unresolved', masterOutcome: { kind: 'unresolved', code: 'arrived_late', message } },
    [
      {
        userId: trade.userId,
        accountId: trade.masterAccountId,
        type: 'order.unresolved',
        payload: {
          tradeId: trade.id,
          requestId: trade.requestId,
          symbol: trade.symbol,
          side: trade.side,
          volume: decText(trade.volume),
          code: 'arrived_late',
          message,
        },
      },
    ],
  );
}
