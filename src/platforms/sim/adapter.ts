import { setTimeout as sleep } from 'node:timers/promises';
import { Decimal, floorToStep } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import { passWriteGate } from '../../domain/write-gate.js';
import type { AccountInfo, Deal, InstrumentSpec, Order, Position, Quote } from '../../domain/types.js';
import type { ActiveFault, FaultOp, SimBrokerApi, SimWriteResult } from '../../simulator/contract.js';
import type {
  BrokerAdapter,
  BrokerEvent,
  Capabilities,
  ConfirmedOutcome,
  ModifyOrderChange,
  OrderOutcome,
  OrderQuery,
  PlaceOrderRequest,
  TagLookup,
} from '../adapter.js';
import { simCapabilities } from './capabilities.js';
import { isSimError, simErrorToRejected, toAppError } from './errors.js';
import { confirmed, rejected, retryLater, unresolved } from '../adapter.js';

type WriteOp = Exclude<FaultOp, '*' | 'read' | 'auth'>;

const DEFAULT_TIMEOUT_MS = 2000;

/**
 * In-process adapter over the simulator. There is no wire, so injected faults are played here exactly as a
 * remote broker's would look to its adapter: a write that times out may or may not have been applied.
 */
export class SimAdapter implements BrokerAdapter {
  readonly capabilities: Capabilities;
  private readonly timeoutMs: number;
  private readonly unsubscribes = new Set<() => void>();

  constructor(
    private readonly broker: SimBrokerApi,
    private readonly simAccountId: string,
    opts: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.capabilities = simCapabilities({ hedging: broker.account(simAccountId)?.hedging ?? true });
  }

  // ---- reads --------------------------------------------------------------------------------------

  accountInfo(): Promise<AccountInfo> {
    return this.read(() => {
      const acc = this.broker.account(this.simAccountId)!;
      const st = this.broker.state(this.simAccountId);
      return { balance: st.balance, equity: st.equity, currency: st.currency, brokerAccountNumber: acc.login };
    });
  }

  instrument(symbol: string): Promise<InstrumentSpec | null> {
    return this.read(() => {
      const i = this.broker.instrument(symbol);
      if (!i) return null;
      const { volumeStep, minVolume, maxVolume, contractSize, tickSize } = i;
      return { symbol: i.symbol, volumeStep, minVolume, maxVolume, contractSize, tickSize };
    });
  }

  listSymbols(): Promise<string[]> {
    return this.read(() => this.broker.instruments().map((i) => i.symbol));
  }

  quote(symbol: string): Promise<Quote | null> {
    return this.read(() => {
      if (!this.broker.instrument(symbol)) return null;
      const q = this.broker.quote(symbol);
      return { bid: q.bid, ask: q.ask, time: q.time };
    });
  }

  listPositions(): Promise<Position[]> {
    return this.read(() => this.broker.positions(this.simAccountId));
  }

  listOrders(query: OrderQuery = {}): Promise<Order[]> {
    return this.read(() => this.broker.orders(this.simAccountId, query));
  }

  listDeals(since: Date): Promise<Deal[]> {
    return this.read(() =>
      this.broker.deals(this.simAccountId, { from: since }).map((d) => ({
        id: d.id,
        orderId: d.orderId,
        positionId: d.positionId,
        symbol: d.symbol,
        side: d.side,
        volume: d.volume,
        price: d.price,
        entry: d.entry,
        time: d.time,
        tag: d.tag,
        // The simulator books realized profit on closing deals and charges no swap or commission.
        profit: d.profit,
        swap: new Decimal(0),
        commission: new Decimal(0),
      })),
    );
  }

  findByTag(tag: string): Promise<TagLookup> {
    return this.read(() => {
      const { position, order } = this.broker.findByTag(this.simAccountId, tag);
      return { found: Boolean(position || order), ...(position ? { position } : {}), ...(order ? { order } : {}) };
    });
  }

  // ---- writes -------------------------------------------------------------------------------------

  placeOrder(req: PlaceOrderRequest): Promise<OrderOutcome> {
    return this.write('placeOrder', (ratio, refuseAs) =>
      fromResult(
        this.broker.placeOrder(this.simAccountId, req, {
          ...(ratio === undefined ? {} : { partialRatio: ratio }),
          ...(refuseAs ? { refuseAs } : {}),
        }),
      ),
    );
  }

  modifyPosition(
    positionId: string,
    change: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Promise<OrderOutcome> {
    return this.write('modifyPosition', () => {
      const p = this.broker.modifyPosition(this.simAccountId, positionId, change);
      return confirmed({ positionId: p.id, brokerTime: new Date().toISOString() });
    });
  }

  closePosition(positionId: string, volume?: Decimal): Promise<OrderOutcome> {
    return this.write('closePosition', (ratio) => {
      const v = ratio === undefined ? volume : this.partOf(positionId, volume, ratio);
      return fromResult(this.broker.closePosition(this.simAccountId, positionId, v));
    });
  }

  cancelOrder(orderId: string): Promise<OrderOutcome> {
    return this.write('cancelOrder', () => {
      const o = this.broker.cancelOrder(this.simAccountId, orderId);
      return confirmed({ brokerOrderId: o.id, brokerTime: o.updatedAt });
    });
  }

  modifyOrder(orderId: string, change: ModifyOrderChange): Promise<OrderOutcome> {
    return this.write('modifyOrder', () => {
      const o = this.broker.modifyOrder(this.simAccountId, orderId, change);
      return confirmed({ brokerOrderId: o.id, brokerTime: o.updatedAt });
    });
  }

  subscribe(listener: (ev: BrokerEvent) => void): () => void {
    const off = this.broker.onEvent((accountId, ev) => {
      if (accountId === this.simAccountId) listener(ev);
    });
    const unsubscribe = () => {
      off();
      this.unsubscribes.delete(unsubscribe);
    };
    this.unsubscribes.add(unsubscribe);
    return unsubscribe;
  }

  async close(): Promise<void> {
    for (const off of [...this.unsubscribes]) off();
  }

  // ---- fault playback -----------------------------------------------------------------------------

  private async read<T>(run: () => T): Promise<T> {
    const f = this.broker.faults.take('read', this.simAccountId);
    switch (f?.kind) {
      case 'rate_limit': {
        const retryAfter = f.retryAfterSec ?? 1;
        throw new AppError('rate_limited', f.message ?? `rate limited, retry after ${retryAfter}s`, {
          retryable: true,
          retryAfter,
        });
      }
      case 'timeout_after_apply':
      case 'timeout_before_apply':
        await sleep(this.timeoutMs);
        throw new AppError('upstream_unavailable', f.message ?? `no answer within ${this.timeoutMs} ms`, {
          retryable: true,
        });
      case 'reset':
      case 'disconnect':
        throw new AppError('upstream_unavailable', f.message ?? 'connection reset', { retryable: true });
      case 'reject':
        throw new AppError('upstream_error', f.message ?? 'request refused by the broker');
      case 'token_invalidated':
        throw new AppError('reconnect_required', f.message ?? 'broker access revoked');
      case 'delay':
        await sleep(f.delayMs ?? 0);
        break;
      default:
        break;
    }
    try {
      if (!this.broker.account(this.simAccountId))
        throw new AppError('not_found', `sim account ${this.simAccountId} not found`);
      return run();
    } catch (err) {
      throw toAppError(err);
    }
  }

  private async write(
    op: WriteOp,
    run: (partialRatio?: number, refuseAs?: 'cancelled' | 'rejected') => ConfirmedOutcome,
  ): Promise<OrderOutcome> {
    const f = this.broker.faults.take(op, this.simAccountId);
    const attempt = (ratio?: number, refuseAs?: 'cancelled' | 'rejected'): OrderOutcome => {
      // The in-process broker's "wire": the last moment before the write applies.
      passWriteGate();
      try {
        return run(ratio, refuseAs);
      } catch (err) {
        if (isSimError(err)) return simErrorToRejected(err);
        throw err;
      }
    };
    switch (f?.kind) {
      case undefined:
      // A real adapter refreshes an expired token and retries once; in process there is nothing to refresh.
      case 'token_expired':
        return attempt();
      case 'partial_fill':
        return attempt(f.partialRatio ?? 0.5);
      case 'delay': {
        const ms = f.delayMs ?? 0;
        if (ms < this.timeoutMs) {
          await sleep(ms);
          return attempt();
        }
        // Slower than our patience: the broker still applies it, we only see the timeout.
        attempt();
        return this.timedOut(f);
      }
      case 'timeout_after_apply':
        attempt();
        return this.timedOut(f);
      case 'timeout_before_apply':
        return this.timedOut(f);
      case 'cancel_after_timeout':
        attempt(undefined, f.refuseAs ?? 'cancelled');
        return this.timedOut(f);
      case 'reset':
      case 'disconnect':
        return unresolved('connection_reset', f.message ?? 'connection reset before the answer');
      case 'reject':
        return rejected('rejected', f.message ?? 'rejected by the broker');
      case 'rate_limit': {
        const retryAfterSec = f.retryAfterSec ?? 1;
        return rejected(
          'rate_limited',
          f.message ?? `rate limited, retry after ${retryAfterSec}s`,
          { retryAfterSec },
          retryLater(retryAfterSec),
        );
      }
      case 'token_invalidated':
        return rejected('reconnect_required', f.message ?? 'broker access revoked');
    }
  }

  private async timedOut(f: ActiveFault): Promise<OrderOutcome> {
    await sleep(this.timeoutMs);
    return unresolved('timeout', f.message ?? `no answer within ${this.timeoutMs} ms`);
  }

  /** The part of a close a partial fill gets: ratio of the asked volume, down to the lot step, at least the minimum. */
  private partOf(positionId: string, volume: Decimal | undefined, ratio: number): Decimal | undefined {
    const p = this.broker.positions(this.simAccountId).find((x) => x.id === positionId);
    const spec = p && this.broker.instrument(p.symbol);
    if (!p || !spec) return volume;
    return Decimal.max(floorToStep((volume ?? p.volume).mul(ratio), spec.volumeStep), spec.minVolume);
  }
}

function fromResult(r: SimWriteResult): ConfirmedOutcome {
  const filled = r.order.status === 'filled';
  return confirmed({
    brokerOrderId: r.order.id,
    positionId: r.position?.id ?? r.order.positionId,
    filledVolume: filled ? (r.deal?.volume ?? r.order.filledVolume) : null,
    fillPrice: r.deal?.price ?? null,
    brokerTime: r.order.updatedAt,
    raw: r,
  });
}
