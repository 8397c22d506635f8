import { setTimeout as sleep } from 'node:timers/promises';
import type { Account } from '../domain/account.js';
import { AppError } from '../domain/errors.js';
import { tally, type AccountPanicReport, type PositionResult, type OrderResult } from '../domain/panic-job.js';
import type { Order, Position } from '../domain/types.js';
import type { BrokerAdapter, OrderOutcome } from '../platforms/adapter.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { FlattenSink, Flattener } from './panic-progress.js';
import type { Dispatcher } from './dispatcher.js';
import { rateLimitWaitMs } from './rate-limit.js';
import { fencedCall } from './write-fence.js';

/** A close or cancel the write gate stopped: provably not sent; the job's next holder reads and sends it. */
class NotSent extends Error {
  constructor() {
    super('not sent: the lease this job runs under ran out here; its next holder goes on');
    this.name = 'NotSent';
  }
}

export interface BrokerSnapshot {
  adapter: BrokerAdapter;
  positions: Position[];
  orders: Order[];
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export interface FlattenerOptions {
  /** Closes in flight per account at once; the connection's pacer decides how fast they leave. */
  concurrency: number;
  /** Sends of one close (or read) refused for the rate limit before it counts as failed for the round. */
  rateLimitRetries: number;
  /** Wait after a rate-limit refusal that carried no retry hint. */
  rateLimitWaitMs: number;
  /** Longest wait honoured from a broker's hint (a bound, so a job always ends). */
  maxRateLimitWaitMs: number;
  /** See PanicJobOptions.mayWrite: checked before each close or cancel and again at the wire. */
  mayWrite?: () => boolean;
}

export const DEFAULT_FLATTENER_OPTIONS: FlattenerOptions = {
  concurrency: 32,
  rateLimitRetries: 8,
  rateLimitWaitMs: 1000,
  maxRateLimitWaitMs: 30_000,
};

/**
 * One account's side of a panic-close, in two steps per round: `read` asks the broker what is still open and
 * settles every earlier write from that answer; `act` sends one close per open position and one cancel per
 * pending order. A close whose answer never came is therefore only ever re-sent after a later read still
 * lists the position: never twice blindly. A refusal for the rate limit is different: nothing was applied,
 * so it is sent again after the broker's retry hint, within the same round.
 */
export class AccountFlattener implements Flattener<BrokerSnapshot> {
  private readonly opts: FlattenerOptions;

  constructor(
    private readonly adapters: AdapterRegistry,
    private readonly dispatcher: Dispatcher,
    opts: Partial<FlattenerOptions> = {},
  ) {
    this.opts = { ...DEFAULT_FLATTENER_OPTIONS, ...opts };
  }

  async read(
    account: Account,
    report: AccountPanicReport,
    cancelPending: boolean,
    sink: FlattenSink,
    stop: () => boolean = () => false,
  ): Promise<BrokerSnapshot | null> {
    let snap: BrokerSnapshot | null = null;
    for (let attempt = 0; !snap; attempt++) {
      try {
        const adapter = await this.adapters.forAccount(account);
        const positions = await adapter.listPositions();
        const orders = cancelPending ? (await adapter.listOrders()).filter((o) => o.status === 'pending') : [];
        snap = { adapter, positions, orders };
      } catch (err) {
        report.error = `broker read failed: ${message(err)}`;
        if (
          !(err instanceof AppError && err.code === 'rate_limited') ||
          attempt >= this.opts.rateLimitRetries ||
          stop()
        )
          return null;
        await sleep(this.hintMs(err.retryAfter !== undefined ? err.retryAfter * 1000 : this.opts.rateLimitWaitMs));
      }
    }
    report.error = null;
    const open = new Set(snap.positions.map((p) => p.id));
    for (const r of report.positions) {
      if (r.outcome === 'closed' || open.has(r.positionId)) continue;
      // Our close was sent but its answer was lost (or the service stopped mid-write): the read settles it.
      const ours = r.outcome === 'unresolved' || r.outcome === 'closing';
      Object.assign(r, { outcome: 'closed', error: null, settledBy: 'read' } satisfies Partial<PositionResult>);
      if (ours) sink.closed(account, r, null);
    }
    const pending = new Set(snap.orders.map((o) => o.id));
    for (const r of report.orders) {
      if (r.outcome === 'cancelled' || r.outcome === 'gone' || pending.has(r.orderId)) continue;
      Object.assign(r, {
        outcome: r.outcome === 'failed' ? 'gone' : 'cancelled',
        error: null,
        settledBy: 'read',
      } satisfies Partial<OrderResult>);
    }
    report.remaining = snap.positions.length;
    report.remainingOrders = snap.orders.length;
    tally(report);
    sink.changed();
    return snap;
  }

  /**
   * Cancels first (a pending order filling now would open what we are closing), then closes, a bounded
   * number at a time: the pacer queues them, and a stop leaves the ones not yet sent unsent.
   */
  async act(
    account: Account,
    report: AccountPanicReport,
    snap: BrokerSnapshot,
    sink: FlattenSink,
    stop: () => boolean = () => false,
  ): Promise<void> {
    const positions = new Map(report.positions.map((r) => [r.positionId, r]));
    const orders = new Map(report.orders.map((r) => [r.orderId, r]));
    const work: Array<() => Promise<void>> = [
      ...snap.orders.map((ord) => () => {
        let r = orders.get(ord.id);
        if (!r) {
          r = {
            orderId: ord.id,
            symbol: ord.symbol,
            side: ord.side,
            type: ord.type,
            volume: ord.volume.toString(),
            outcome: 'cancelling',
            error: null,
            attempts: 0,
            settledBy: null,
          };
          report.orders.push(r);
        }
        return this.cancelOne(account, snap, report, r, sink, stop);
      }),
      ...snap.positions.map((pos) => () => {
        let r = positions.get(pos.id);
        if (!r) {
          r = {
            positionId: pos.id,
            symbol: pos.symbol,
            side: pos.side,
            volume: pos.volume.toString(),
            outcome: 'closing',
            closePrice: null,
            error: null,
            attempts: 0,
            settledBy: null,
          };
          report.positions.push(r);
        }
        return this.closeOne(account, snap, report, r, pos, sink, stop);
      }),
    ];
    let next = 0;
    const worker = async () => {
      while (next < work.length && !stop()) await work[next++]!();
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, work.length) }, worker));
  }

  private async closeOne(
    account: Account,
    snap: BrokerSnapshot,
    report: AccountPanicReport,
    r: PositionResult,
    pos: Position,
    sink: FlattenSink,
    stop: () => boolean,
  ): Promise<void> {
    Object.assign(r, {
      outcome: 'closing',
      volume: pos.volume.toString(),
      error: null,
      settledBy: null,
    } satisfies Partial<PositionResult>);
    let o: OrderOutcome;
    for (let refused = 0; ; refused++) {
      r.attempts += 1;
      sink.changed();
      const sent = await this.fenced(() => this.dispatcher.close(account.id, snap.adapter, pos.id));
      if (sent === null) return this.notSent(r, sink);
      o = sent;
      const wait = rateLimitWaitMs(o, this.opts.rateLimitWaitMs);
      if (wait === null || refused >= this.opts.rateLimitRetries || stop()) break;
      r.error = `rate_limited: waiting ${wait} ms before sending again`;
      await sleep(this.hintMs(wait));
    }
    if (o.kind === 'confirmed' && (!o.filledVolume || o.filledVolume.gte(pos.volume))) {
      Object.assign(r, {
        outcome: 'closed',
        error: null,
        closePrice: o.fillPrice?.toString() ?? null,
        settledBy: 'answer',
      } satisfies Partial<PositionResult>);
      // Still open = listed at the last read and not closed since: closed + remaining stays the job's size
      // while closes land (it counted each closed position twice until the next read).
      report.remaining = Math.max(0, report.remaining - 1);
      sink.closed(account, r, o.fillPrice?.toString() ?? null);
    } else if (o.kind === 'confirmed') {
      // The rest stays open; the next round reads it and closes what is left.
      Object.assign(r, {
        outcome: 'failed',
        error: `partially closed: ${o.filledVolume} of ${pos.volume}`,
      } satisfies Partial<PositionResult>);
    } else {
      Object.assign(r, {
        outcome: o.kind === 'unresolved' ? 'unresolved' : 'failed',
        error: `${o.code}: ${o.message}`,
      } satisfies Partial<PositionResult>);
    }
    tally(report);
    sink.changed();
  }

  private async cancelOne(
    account: Account,
    snap: BrokerSnapshot,
    report: AccountPanicReport,
    r: OrderResult,
    sink: FlattenSink,
    stop: () => boolean,
  ): Promise<void> {
    Object.assign(r, { outcome: 'cancelling', error: null, settledBy: null } satisfies Partial<OrderResult>);
    let o: OrderOutcome;
    for (let refused = 0; ; refused++) {
      r.attempts += 1;
      sink.changed();
      const sent = await this.fenced(() =>
        this.dispatcher.run(account.id, snap.adapter, () => snap.adapter.cancelOrder(r.orderId)),
      );
      if (sent === null) return this.notSent(r, sink);
      o = sent;
      const wait = rateLimitWaitMs(o, this.opts.rateLimitWaitMs);
      if (wait === null || refused >= this.opts.rateLimitRetries || stop()) break;
      r.error = `rate_limited: waiting ${wait} ms before sending again`;
      await sleep(this.hintMs(wait));
    }
    if (o.kind === 'confirmed') {
      Object.assign(r, { outcome: 'cancelled', error: null, settledBy: 'answer' } satisfies Partial<OrderResult>);
      report.remainingOrders = Math.max(0, report.remainingOrders - 1);
    } else
      Object.assign(r, {
        outcome: o.kind === 'unresolved' ? 'unresolved' : 'failed',
        error: `${o.code}: ${o.message}`,
      } satisfies Partial<OrderResult>);
    tally(report);
    sink.changed();
  }

  /**
   * One write under the job's lease (when it has one): null when the gate refused it, before the call or at the
   * wire, so nothing of it reached the broker. Any other failure is an unresolved outcome, as before.
   */
  private async fenced(send: () => Promise<OrderOutcome>): Promise<OrderOutcome | null> {
    const mayWrite = this.opts.mayWrite;
    const refuse = (): never => {
      throw new NotSent();
    };
    try {
      return await (mayWrite ? fencedCall(mayWrite, refuse, send) : send());
    } catch (err) {
      if (err instanceof NotSent) return null;
      return { kind: 'unresolved', code: 'adapter_error', message: message(err) };
    }
  }

  /** Left as it was before this attempt: the next holder's read settles it, then sends it if still open. */
  private notSent(r: PositionResult | OrderResult, sink: FlattenSink): void {
    r.attempts -= 1;
    r.error = new NotSent().message;
    sink.changed();
  }

  private hintMs(ms: number): number {
    return Math.min(Math.max(0, ms), this.opts.maxRateLimitWaitMs);
  }
}
