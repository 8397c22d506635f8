import type { Trade } from '../domain/ledger-types.js';
import { IdempotencyRepo, type StoredResponse } from '../store/repos/idempotency.js';
import type { Store } from '../store/store.js';
import { STATUS } from './errors.js';

/** The one route whose effect the store can tell after a crash: the order route records its request id on the trade. */
const ORDER_ROUTE = '/v1/accounts/:account_id/orders';

/**
 * What the order route answers for this trade (202 accepted, 400 refused by the Master's broker, 409 outcome
 * unknown), so a retry after a crash gets the answer the client would have had.
 */
function orderAnswer(t: Trade, requestId: string): { status: number; response: StoredResponse } {
  const error = (
    code: 'invalid_request' | 'write_outcome_unknown',
    message: string,
    extra: Record<string, unknown>,
  ) => ({
    status: STATUS[code],
    response: { body: { ...extra, code, error: message, requestId }, headers: {} },
  });
  if (t.status === 'accepted') {
    return {
      status: 202,
      response: {
        body: {
          tradeId: t.id,
          status: 'accepted',
          copiedTo: t.copiedTo,
          masterPositionId: t.masterPositionId,
          fillPrice: t.fillPrice === null ? null : t.fillPrice.toNumber(),
        },
        headers: {},
      },
    };
  }
  if (t.status === 'rejected') {
    const outcome = (t.masterOutcome ?? {}) as { code?: string; message?: string };
    return error('invalid_request', `the Master's broker refused the order: ${outcome.message ?? 'no reason given'}`, {
      tradeId: t.id,
      brokerCode: outcome.code ?? null,
    });
  }
  return error(
    'write_outcome_unknown',
    `the service stopped before the Master's broker confirmed the order and it could not be found by its tag yet; check trade ${t.id} before retrying`,
    { tradeId: t.id },
  );
}

export interface SettleOptions {
  /** Keys claimed by this process are its own requests, still running: never settled here. */
  instanceId: string;
  /** Settle keys claimed before this time (a store with one writer: this process's start; shared: a grace past the longest request). */
  before: Date;
  onError?: (err: unknown) => void;
}

/**
 * Idempotency keys a stopped process left in flight, settled from what the store knows: the order route's
 * trade exists -> its answer is stored (a retry replays it); no trade -> the key is freed (the handler never
 * reached the broker, so the retry runs). Other routes record nothing to tell by: their keys are freed.
 */
export async function settleInFlightKeys(
  store: Store,
  opts: SettleOptions,
): Promise<{ answered: number; freed: number }> {
  const repo = new IdempotencyRepo(store.database.db, 24 * 3600_000);
  let answered = 0;
  let freed = 0;
  for (const row of await repo.inFlight(opts.before, opts.instanceId)) {
    try {
      const trade =
        row.route === ORDER_ROUTE && row.requestId
          ? await store.trades.tradeOfRequest(row.userId, row.requestId)
          : null;
      if (trade) {
        const a = orderAnswer(trade, row.requestId!);
        await repo.settle(row, a.status, a.response);
        answered++;
      } else {
        await repo.free(row);
        freed++;
      }
    } catch (err) {
      opts.onError?.(err);
    }
  }
  return { answered, freed };
}
