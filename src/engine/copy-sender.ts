import type { Account } from '../domain/account.js';
import { goesStale, intentAction } from '../domain/intent-action.js';
import { accountLeaseKey, StaleLeaseError } from '../domain/lease.js';
import type { CopyIntent } from '../domain/ledger-types.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import { AccountWork } from './account-work.js';
import type { CopyObserver } from './copy-observer.js';
import type { Dispatcher } from './dispatcher.js';
import { executeOp, verifyOp, type IntentOp } from './intent-ops.js';
import type { TradeLike } from './ledger.js';
import { outcomeWrite } from './outcome-ledger.js';
import type { OutcomeWriter } from './outcome-writer.js';
import type { Slave } from './plan-inputs.js';
import { copyRetryWindow, type RetryHolds, retryTopic, sendPaced } from './rate-limit.js';
import { fencedCall } from './write-fence.js';

/** One broker write of a ledger row: what is sent for which Master action, and what its outcome record carries. */
export interface SendRequest {
  master: Account;
  tradeId: string;
  trade: TradeLike;
  row: CopyIntent;
  slave: Slave;
  op: IntentOp;
  /** 1 for the first send; the settle loop's resends count on. */
  attempt: number;
  /** Per-hop timings so far (ms), this send's own object: the send adds its hops. */
  latency: Record<string, number>;
  /** `performance.now()` when the write was queued (the send hop counts from it). */
  queuedAt: number;
  /** Tags of the earlier attempts, kept on the row for lookups. */
  prevTags?: string[];
}

/**
 * The engine's broker writes: each passes the write gate at the moment it leaves, is paced and retried as its
 * broker says, has a lone timeout settled by one look at the broker, and ends in an outcome written. Tracks the
 * writes on the wire per Master, so a hand-over can wait for the last of them.
 */
export class CopySender {
  /** Called when a write's outcome stays unknown after its one lookup. */
  onUnresolved: (() => void) | undefined;
  /** Told what each broker answered. */
  observer: CopyObserver | undefined;
  /** Per Master account, broker writes between their write gate and their outcome (dispatches and settle resends). */
  private readonly sending = new AccountWork();
  private readonly lastCopy = new Map<string, number>();
  private readonly mayWrite: (masterAccountId: string) => boolean;
  /**
   * Whether broker writes pass the write gate (a worker under leases). Without a lease there is nothing for the
   * gate to refuse, and not opening it keeps its AsyncLocalStorage unused: on Node 20 and 22 its first use turns
   * on promise hooks for every promise of the process (a 1000-Slave fan-out's hand-off paid them ~7 times a send).
   */
  private readonly fenced: boolean;

  constructor(
    private readonly store: Store,
    private readonly dispatcher: Dispatcher,
    private readonly writer: OutcomeWriter,
    private readonly retrying: RetryHolds,
    private readonly clock: () => number,
    mayWrite: ((masterAccountId: string) => boolean) | undefined,
    private readonly sleep: ((ms: number) => Promise<void>) | undefined,
  ) {
    this.mayWrite = mayWrite ?? (() => true);
    this.fenced = mayWrite !== undefined;
  }

  /** This Master's action is being planned now (hand-overs pick the quietest Master). */
  touch(masterAccountId: string): void {
    this.lastCopy.set(masterAccountId, this.clock());
  }

  /** Sends one op, settles a timeout by one look at the broker, and writes the outcome. */
  sendOp(s: SendRequest): Promise<OrderOutcome> {
    const { master } = s;
    // Counted from before the write gate to the outcome: `writesEnded` waits for every one of them (a hand-over).
    this.lastCopy.set(master.id, this.clock());
    const p = this.sendOpNow(s);
    // Only a worker under leases waits for them (at a hand-over); elsewhere the two promises and the set entry of
    // each send would be made for nobody, on the path to a fan-out's last send.
    if (!this.fenced) return p;
    this.sending.add(
      master.id,
      p.then(
        () => undefined,
        () => undefined,
      ),
    );
    return p;
  }

  /**
   * Resolves once no broker write of this Master's copies (a dispatch or a settle resend) is between its write gate
   * and its outcome: called after the Master's lease left the fence, nothing new passes the gate, so none can land
   * after this resolves. Writes are tracked only when the engine is fenced (`mayWrite` given); unfenced, this
   * resolves at once.
   */
  writesEnded(masterAccountId: string): Promise<void> {
    return this.sending.ended(masterAccountId);
  }

  /**
   * When this Master's last action was planned or a copy of it written (engine clock), 0 if none since this
   * process started: hand-overs pick the quietest.
   */
  lastCopyAt(masterAccountId: string): number {
    return this.lastCopy.get(masterAccountId) ?? 0;
  }

  private async sendOpNow(s: SendRequest): Promise<OrderOutcome> {
    const { master, tradeId, trade, row, slave, op, attempt, latency, queuedAt } = s;
    const adapter = slave.adapter!;
    // Unsent, the row stays as recorded: the lease's new holder settles it (lookup by tag, then its own send).
    if (!this.mayWrite(master.id)) this.refuse(master.id);
    const sendAt = performance.now();
    latency.send = sendAt - queuedAt;
    const stale = goesStale(intentAction(row.action));
    const platform = slave.account.platform;
    const observer = this.observer;
    // The send and its answer hook are plain functions, not one more async frame per send: a fan-out's thousand
    // of them live until their brokers answer, and what each allocates before its write is the hand-off's cost.
    let outcome = await sendPaced(
      () =>
        executeOp(adapter, op, (fn) =>
          // Asked again at the moment of the write: the wait for a token or a rate-limit hint may outlast the lease.
          this.dispatcher.run(
            slave.account.id,
            adapter,
            this.fenced
              ? () =>
                  fencedCall(
                    () => this.mayWrite(master.id),
                    () => this.refuse(master.id),
                    fn,
                  )
              : fn,
          ),
        ),
      () =>
        copyRetryWindow({
          now: this.clock,
          sleep: this.sleep,
          holds: { registry: this.retrying, accountId: slave.account.id, topic: openTopic(master.id, row, trade) },
          actionAt: trade.actionAt.getTime(),
          maxDelayMs: slave.rule.maxDelayMs,
          addsExposure: stale,
          slaveStatus: async () => (await this.store.accounts.byId(slave.account.id))?.status ?? null,
        }),
      observer ? (o, retry) => observer.answered(platform, o, retry > 0) : undefined,
    );
    latency.ack = performance.now() - sendAt;
    // One look at the broker settles a lone timeout at once. Not while more writes of this connection are queued
    // or on the wire (a burst) where the adapter reads all its tags at once: a lookup each (positions, orders and,
    // for an absent tag, the whole order history, behind the broker's read limits) kept the burst's timed-out
    // writes from the settle pass, which reads the Slave's tags once for all of them (tag-snapshot.ts), until
    // they were older than the rule's limit and refused as stale.
    if (outcome.kind === 'unresolved' && !(adapter.tagIndex && this.dispatcher.busy(slave.account.id))) {
      const v = await verifyOp(adapter, op, [row.tag]);
      if (v.state === 'applied') outcome = v.outcome;
    }
    await this.writer.push(
      outcomeWrite(master, tradeId, trade, row, slave.account.id, op, outcome, {
        attempts: attempt,
        latency,
        prevTags: s.prevTags ?? [],
      }),
    );
    this.observer?.settled(platform, outcome, latency, attempt);
    // Settled as soon as the broker can answer, before the action ages past the rule's staleness limit.
    if (outcome.kind === 'unresolved') this.onUnresolved?.();
    return outcome;
  }

  private refuse(masterAccountId: string): never {
    throw new StaleLeaseError(accountLeaseKey(masterAccountId), undefined, null);
  }
}

/** An open's wait is ended when the Master closes what it would open (AccountWatch tells RetryHolds.supersede). */
function openTopic(masterId: string, row: CopyIntent, trade: TradeLike): string | undefined {
  if (!goesStale(intentAction(row.action))) return undefined;
  if (trade.orderType !== 'market' && trade.masterOrderId) return retryTopic(masterId, 'order', trade.masterOrderId);
  return trade.masterPositionId ? retryTopic(masterId, 'position', trade.masterPositionId) : undefined;
}
