import { type Decimal, isMultipleOf } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import { correlationTag } from '../domain/correlation.js';
import { AppError, invalid, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { BrokerAdapter, OrderOutcome } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { AdapterRegistry } from './adapter-registry.js';
import { fanOutApiOrder, type OrderInput } from './api-fanout.js';
import { lookupMasterWrite, type MasterLookup } from './master-lookup.js';
import type { CopyEngine } from './copy-engine.js';
import { Admission } from './admission.js';
import { StaleLeaseError, accountLeaseKey } from '../domain/lease.js';
import { NOT_AT_BROKER } from './order-recovery.js';
import { fencedCall } from './write-fence.js';

export type { OrderInput } from './api-fanout.js';

export interface OrderServiceOptions {
  /**
   * A worker: whether a broker write under this Master's lease may leave now (LeaseKeeper.mayWrite). The Master's
   * own order passes it before the call and again at the wire (the write gate), as the copies do. Default: always.
   */
  mayWrite?: (masterAccountId: string) => boolean;
}

export interface OrderResult {
  tradeId: string;
  status: 'accepted';
  copiedTo: number;
  masterPositionId: string | null;
  masterOrderId: string | null;
  fillPrice: Decimal | null;
  /** Resolves when every dispatched copy has its outcome (tests and the CLI wait on it; the API does not). */
  copies: Promise<void>;
}

/**
 * Step 1 of the pipeline driven by the API: the Master's write goes first and its outcome decides; then one
 * intent per Slave is planned, recorded in one transaction, and dispatched in parallel.
 */
export class OrderService {
  private readonly admission: Admission;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly engine: CopyEngine,
    private readonly clock: () => number = Date.now,
    private readonly opts: OrderServiceOptions = {},
  ) {
    this.admission = new Admission(store, adapters, engine);
  }

  async send(
    userId: string,
    masterAccountId: string,
    input: OrderInput,
    requestId: string | null,
  ): Promise<OrderResult> {
    const master = await this.store.accounts.owned(userId, masterAccountId);
    if (!master) throw notFound('account');
    if (master.role !== 'master')
      throw new AppError(
        'account_not_master',
        `account ${master.id} is a ${master.role}; orders are sent to a Master account`,
      );
    if (master.status !== 'connected')
      throw new AppError(
        'account_not_connected',
        `account ${master.id} is ${master.status}; it must be connected to take orders`,
      );
    const adapter = await this.adapters.forAccount(master);
    await this.validate(adapter, input);
    // Before the Master's write: a refused order reaches no broker (429 slaves_backlogged, see admission.ts).
    await this.admission.admit(master);
    // A worker that already knows its lease is going records nothing: the successor takes the retry.
    if (this.opts.mayWrite && !this.opts.mayWrite(master.id)) throw leaseRunningOut(null);

    const receivedAt = this.clock();
    const tradeId = newId('trd');
    const tag = correlationTag({ tradeId, accountId: master.id, action: 'open' });
    // From before the row exists until the route has answered, the settle loop leaves this trade alone.
    this.engine.claims.orderRouteStarted(tradeId);
    try {
      await this.store.trades.insertTrade({
        id: tradeId,
        userId,
        masterAccountId: master.id,
        groupId: master.groupId,
        source: 'api',
        action: 'open',
        symbol: input.symbol,
        side: input.side,
        orderType: input.type,
        volume: input.volume,
        price: input.price,
        stopLoss: input.stopLoss,
        takeProfit: input.takeProfit,
        tag,
        status: 'pending',
        requestId,
      });
      return await this.place(adapter, master, tradeId, tag, input, receivedAt, requestId);
    } finally {
      this.engine.claims.orderRouteEnded(tradeId);
    }
  }

  private async place(
    adapter: BrokerAdapter,
    master: Account,
    tradeId: string,
    tag: string,
    input: OrderInput,
    receivedAt: number,
    requestId: string | null,
  ): Promise<OrderResult> {
    const sent = await this.placeFenced(adapter, master, tradeId, tag, input, requestId);
    try {
      return await this.afterMasterWrite(adapter, master, tradeId, tag, input, sent, receivedAt, requestId);
    } catch (err) {
      // The store went away after the Master's write left: the order may be at the broker. Never a retryable 503
      // (a retry, even under the same Idempotency-Key, would place it twice): the trade stays `pending`, and the
      // settle loop looks it up by its tag once the store is back and runs its fan-out (order-recovery.ts).
      if (isStoreUnavailable(err))
        throw new AppError(
          'write_outcome_unknown',
          `the store could not be reached after the order was sent to the Master's broker; it is settled by its tag once the store is back: check trade ${tradeId} before retrying`,
          { details: { tradeId }, cause: err },
        );
      throw err;
    }
  }

  private async afterMasterWrite(
    adapter: BrokerAdapter,
    master: Account,
    tradeId: string,
    tag: string,
    input: OrderInput,
    sent: OrderOutcome,
    receivedAt: number,
    requestId: string | null,
  ): Promise<OrderResult> {
    // A timeout is settled by asking the broker for the tag, once, before anyone decides anything.
    const outcome = sent.kind === 'unresolved' ? lookupAsOutcome(await lookupMasterWrite(adapter, tag), sent) : sent;
    if (outcome.kind !== 'confirmed') {
      const status = outcome.kind === 'unresolved' ? 'unresolved' : 'rejected';
      await this.store.trades.updateTrade(
        tradeId,
        { status, masterOutcome: { kind: outcome.kind, code: outcome.code, message: outcome.message } },
        [orderRefusedEvent(master, status, tradeId, requestId, input, outcome.code, outcome.message)],
      );
      if (outcome.kind === 'unresolved') {
        throw new AppError(
          'write_outcome_unknown',
          `the Master's broker did not confirm the order in time and it could not be found by its tag yet; check trade ${tradeId} before retrying`,
          { details: { tradeId } },
        );
      }
      throw new AppError('invalid_request', `the Master's broker refused the order: ${outcome.message}`, {
        details: { tradeId, brokerCode: outcome.code },
      });
    }

    const copies = await fanOutApiOrder(this.engine, master, tradeId, tag, input, outcome, receivedAt, requestId);
    return {
      tradeId,
      status: 'accepted',
      copiedTo: copies.dispatched,
      masterPositionId: outcome.positionId,
      masterOrderId: outcome.brokerOrderId,
      fillPrice: outcome.fillPrice,
      copies: copies.done,
    };
  }

  /**
   * The Master's write under its lease: refused before the call, or at the wire right before its bytes leave,
   * when this worker's lease is lost or about to run out. Refused means provably not sent (the gate throws before
   * the one trading write of the call), so the trade is closed as `not_at_broker` and the client is told to retry
   * (503 upstream_unavailable, retryable): the successor holding the lease takes the retry. Nothing else can
   * make this trade's tag appear at the broker later (only this call ever sends it).
   */
  private async placeFenced(
    adapter: BrokerAdapter,
    master: Account,
    tradeId: string,
    tag: string,
    input: OrderInput,
    requestId: string | null,
  ): Promise<OrderOutcome> {
    const mayWrite = this.opts.mayWrite;
    if (!mayWrite) return adapter.placeOrder({ ...input, tag });
    const refuse = (): never => {
      throw new StaleLeaseError(accountLeaseKey(master.id), undefined, null);
    };
    try {
      return await fencedCall(
        () => mayWrite(master.id),
        refuse,
        () => adapter.placeOrder({ ...input, tag }),
      );
    } catch (err) {
      if (!(err instanceof StaleLeaseError)) throw err;
      const message = "not sent: this worker's lease on the Master account ran out before the order could leave";
      // Only while still pending: a row another process already settled keeps its word.
      await this.store.trades.updateTradeIf(
        tradeId,
        ['pending'],
        { status: 'rejected', masterOutcome: { kind: 'rejected', code: NOT_AT_BROKER, message } },
        [orderRefusedEvent(master, 'rejected', tradeId, requestId, input, NOT_AT_BROKER, message)],
      );
      throw leaseRunningOut(tradeId);
    }
  }

  /** Bad input is a clear 400 before anything reaches a broker. */
  private async validate(adapter: BrokerAdapter, input: OrderInput): Promise<void> {
    if (input.type !== 'market' && !adapter.capabilities.orderTypes.includes(input.type)) {
      throw invalid(`this account's platform does not take ${input.type} orders`);
    }
    if (input.type !== 'market' && input.price === null) throw invalid(`price is required for a ${input.type} order`);
    const spec = await adapter.instrument(input.symbol);
    if (!spec) throw invalid(`unknown symbol ${input.symbol} at the Master's broker`, { field: 'symbol' });
    if (input.volume.lt(spec.minVolume) || input.volume.gt(spec.maxVolume)) {
      throw invalid(`volume must be between ${spec.minVolume} and ${spec.maxVolume} for ${input.symbol}`, {
        field: 'volume',
      });
    }
    if (!isMultipleOf(input.volume, spec.volumeStep)) {
      throw invalid(`volume must be a multiple of ${spec.volumeStep} for ${input.symbol}`, { field: 'volume' });
    }
    for (const [field, v] of [
      ['price', input.price],
      ['stopLoss', input.stopLoss],
      ['takeProfit', input.takeProfit],
    ] as const) {
      if (v !== null && !isMultipleOf(v, spec.tickSize))
        throw invalid(`${field} must be a multiple of the tick size ${spec.tickSize} for ${input.symbol}`, { field });
    }
  }
}

/** 503, retryable: provably nothing of this order left for the broker (see placeFenced). */
/** The event of a Master order the broker did not fill (rejected, or its outcome unknown). */
function orderRefusedEvent(
  master: Account,
  status: 'rejected' | 'unresolved',
  tradeId: string,
  requestId: string | null,
  input: OrderInput,
  code: string | undefined,
  message: string | undefined,
) {
  return {
    userId: master.userId,
    accountId: master.id,
    type: `order.${status}`,
    payload: {
      tradeId,
      requestId,
      symbol: input.symbol,
      side: input.side,
      volume: input.volume.toString(),
      code,
      message,
    },
  };
}

function leaseRunningOut(tradeId: string | null): AppError {
  return new AppError(
    'upstream_unavailable',
    "this worker's lease on the Master account ran out before the order could leave; nothing was sent to the broker, retry shortly",
    { retryable: true, retryAfter: 2, ...(tradeId ? { details: { tradeId } } : {}) },
  );
}

function lookupAsOutcome(l: MasterLookup, sent: OrderOutcome): OrderOutcome {
  return l.kind === 'confirmed' || l.kind === 'rejected' ? l.outcome : sent;
}
