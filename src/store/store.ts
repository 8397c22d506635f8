import { EmbeddedMaintenance } from './embedded-maintenance.js';
import { RecentIntentsSweep } from './recent-intents-sweep.js';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database, type OpenOptions } from './db.js';
import { AccountsRepo } from './repos/accounts.js';
import { CredentialsRepo } from './repos/credentials.js';
import { EquityRepo } from './repos/equity.js';
import { EventsRepo } from './repos/events.js';
import { IdempotencyRepo } from './repos/idempotency.js';
import { PanicJobsRepo } from './repos/panic-jobs.js';
import { RequestsRepo } from './repos/requests.js';
import { RiskLimitsRepo } from './repos/risk-limits.js';
import { ShadowTwinsRepo } from './repos/shadow-twins.js';
import { TradesRepo } from './repos/trades.js';
import { UsersRepo } from './repos/users.js';
import { WebhookRepo } from './repos/webhooks.js';
import { SealedRepo } from './repos/sealed.js';
import { LeasesRepo } from './repos/leases.js';
import { MasterItemsCache } from './repos/master-items-cache.js';
import { MasterCursorsRepo } from './repos/master-cursors.js';
import { BridgeTokensRepo } from './repos/bridge-tokens.js';
import { ConnectionTestsRepo } from './repos/connection-tests.js';
import { ReceiptsRepo } from './repos/receipts.js';
import { SloRepo } from './repos/slo.js';
import { RuleRevisionsRepo } from './repos/rule-revisions.js';
import { ReplayHistoryRepo } from './repos/replay-history.js';
import { AlertsRepo } from './repos/alerts.js';
import { AccessGrantsRepo } from './repos/access-grants.js';
import { SecondFactorRepo } from './repos/second-factor.js';

/**
 * The store: one object with a repository per concern, on PGlite or PostgreSQL alike. Nothing outside
 * src/store holds the database handle or a query library: every query is a repository method here.
 */
export class Store {
  readonly users: UsersRepo;
  readonly credentials: CredentialsRepo;
  readonly accounts: AccountsRepo;
  readonly trades: TradesRepo;
  readonly requests: RequestsRepo;
  readonly events: EventsRepo;
  readonly webhooks: WebhookRepo;
  readonly panicJobs: PanicJobsRepo;
  readonly riskLimits: RiskLimitsRepo;
  readonly shadowTwins: ShadowTwinsRepo;
  readonly equity: EquityRepo;
  /** Every value sealed by the credential box, for key rotation. */
  readonly sealed: SealedRepo;
  /** Worker leases with their fencing epochs (PostgreSQL; on the embedded store one process holds them all). */
  readonly leases: LeasesRepo;
  /** How far each Master's broker deal history has been replayed. */
  readonly masterCursors: MasterCursorsRepo;
  /** Terminal bridge tokens (hashes only). */
  readonly bridgeTokens: BridgeTokensRepo;
  readonly connectionTests: ConnectionTestsRepo;
  /** Verifiable receipts of ended ledger rows, chained per Slave account (docs/receipts.md). */
  readonly receipts: ReceiptsRepo;
  /** Service-level targets per group and the breaches in progress (docs/slo.md). */
  readonly slo: SloRepo;
  /** Numbered revisions of copy rules and risk limits, written with them (docs/what-if.md). */
  readonly revisions: RuleRevisionsRepo;
  /** What a what-if replay reads of a Slave's period (read only). */
  readonly replayHistory: ReplayHistoryRepo;
  /** Built-in alerts: channels, rules and deliveries (docs/alerts.md). */
  readonly alerts: AlertsRepo;
  /** Roles granted on accounts and groups to other users (docs/people.md). */
  readonly grants: AccessGrantsRepo;
  /** TOTP factors, recovery codes and one-time tokens (hashes and sealed secrets only). */
  readonly secondFactor: SecondFactorRepo;
  private maintenance: EmbeddedMaintenance | null = null;
  private sweep: RecentIntentsSweep | null = null;

  constructor(readonly database: Database) {
    const db = database.db;
    this.events = new EventsRepo(db);
    this.users = new UsersRepo(db, this.events);
    // The embedded store has exactly one writer (this process), so read caches cannot go stale there.
    const cache = database.kind === 'pglite';
    this.credentials = new CredentialsRepo(db, { cache });
    const items = cache ? new MasterItemsCache() : null;
    this.accounts = new AccountsRepo(db, { cache, items });
    this.trades = new TradesRepo(db, this.events, items);
    this.requests = new RequestsRepo(db);
    this.webhooks = new WebhookRepo(db, this.events);
    this.panicJobs = new PanicJobsRepo(db, this.events);
    this.riskLimits = new RiskLimitsRepo(db);
    this.shadowTwins = new ShadowTwinsRepo(db);
    this.equity = new EquityRepo(db);
    this.sealed = new SealedRepo(db);
    this.leases = new LeasesRepo(db);
    this.masterCursors = new MasterCursorsRepo(db);
    this.bridgeTokens = new BridgeTokensRepo(db);
    this.connectionTests = new ConnectionTestsRepo(db);
    this.receipts = new ReceiptsRepo(db);
    this.slo = new SloRepo(db, this.events);
    this.revisions = new RuleRevisionsRepo(db, (id) => this.accounts.forgetRule(id));
    this.replayHistory = new ReplayHistoryRepo(db);
    this.alerts = new AlertsRepo(db);
    this.grants = new AccessGrantsRepo(db);
    this.secondFactor = new SecondFactorRepo(db);
  }

  /** Idempotency-Key records, remembered for `ttlMs` (the API's choice, so a repository per caller). */
  idempotency(ttlMs: number): IdempotencyRepo {
    return new IdempotencyRepo(this.database.db, ttlMs);
  }

  /**
   * The embedded store's vacuum and statistics (see EmbeddedMaintenance), started by the service (not by tests and
   * benchmarks that open a store of their own and count its statements). PostgreSQL runs its own autovacuum: no-op.
   */
  startMaintenance(opts: { everyMs: number; onError?: (err: unknown) => void }): EmbeddedMaintenance | null {
    if (this.database.kind !== 'pglite' || this.maintenance) return this.maintenance;
    this.maintenance = new EmbeddedMaintenance(this.database.db, opts);
    this.maintenance.start();
    return this.maintenance;
  }

  /**
   * The sweep of copy_intents_recent (see RecentIntentsSweep), on either store, started by the service; tests and
   * benchmarks that count statements leave it off (their intents move after each outcome batch).
   */
  startIntentSweep(opts: {
    everyMs: number;
    olderThanMs: number;
    onError?: (err: unknown) => void;
  }): RecentIntentsSweep {
    this.sweep ??= new RecentIntentsSweep(this.trades, opts);
    this.sweep.start();
    return this.sweep;
  }

  /** One round trip to the database (readiness): throws when it cannot answer, or once closed. */
  async ping(): Promise<void> {
    await this.database.db.execute(sql`select 1`);
  }

  static async open(opts: OpenOptions): Promise<Store> {
    return new Store(await openDatabase(opts));
  }

  async close(): Promise<void> {
    await this.maintenance?.stop();
    await this.sweep?.stop();
    await this.requests.flush().catch(() => undefined);
    await this.database.close();
  }
}
