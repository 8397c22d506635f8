import pg from 'pg';
import { isConnectionError } from '../../src/store/unavailable.js';
import { killStarted } from './cli-process.js';
import type { Deployment } from './deployment.js';

const FINAL = ['confirmed', 'rejected', 'skipped', 'denied'];
const VOLUMES = [0.02, 0.04, 0.06];

/** Read-only views of the ledger a process-level test waits on (one pooled client beside the store). */
export class LedgerProbe {
  private readonly pool: pg.Pool;
  constructor(
    url: string,
    private readonly masterId: string,
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: 2 });
    // An idle client ended by the server (the test's database dropped `with (force)`) is an 'error' event: with no
    // listener it is an uncaught exception in the test process (seen in CI, rolling-restart.test.ts).
    this.pool.on('error', () => undefined);
  }
  /**
   * A read that outlasts a restart of the database under test (the chaos run restarts its own PostgreSQL): a
   * connection error is tried again for up to 20 s; any other error at once.
   */
  private async read(sql: string, args: unknown[]): Promise<pg.QueryResult> {
    const end = Date.now() + 20_000;
    for (;;) {
      try {
        return await this.pool.query(sql, args);
      } catch (err) {
        if (!isConnectionError(err) || Date.now() > end) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
  async trades(): Promise<number> {
    const r = await this.read('select count(*)::int n from trades where master_account_id = $1', [this.masterId]);
    return r.rows[0].n as number;
  }
  /** Intents of this Master not yet in a final state (copies planned or on the wire). */
  async open(): Promise<number> {
    const r = await this.read(
      `select count(*)::int n from copy_intents ci join trades t on t.id = ci.trade_id
       where t.master_account_id = $1 and ci.state <> all($2)`,
      [this.masterId, FINAL],
    );
    return r.rows[0].n as number;
  }
  /** Trades created after `since` whose every intent is final, with at least one intent confirmed. */
  async copiedSince(since: Date): Promise<number> {
    const r = await this.read(
      `select count(*)::int n from trades t where t.master_account_id = $1 and t.created_at > $2
       and exists (select 1 from copy_intents c where c.trade_id = t.id and c.state = 'confirmed')
       and not exists (select 1 from copy_intents c where c.trade_id = t.id and c.state <> all($3))`,
      [this.masterId, since, FINAL],
    );
    return r.rows[0].n as number;
  }
  async query<T>(sql: string, args: unknown[] = []): Promise<T[]> {
    return (await this.read(sql, args)).rows as T[];
  }
  close = () => this.pool.end();
}

export interface FlowCounts {
  apiAccepted: number;
  apiRefused: Record<string, number>;
  directOpens: number;
  directCloses: number;
}

/**
 * A steady flow of Master activity on a platform A Master: orders through the api process, and opens and closes
 * made at the Master's broker directly (MetaApi-style REST, as the trader's own terminal would). Paced by the
 * ledger, not by time: after each action it waits (bounded) until the ledger has a new trade and no copy is
 * in flight, so it neither floods a failover nor stalls on one.
 */
export class MasterFlow {
  readonly counts: FlowCounts = { apiAccepted: 0, apiRefused: {}, directOpens: 0, directCloses: 0 };
  /** Direct trades the Master's broker refused (none expected): the test asserts this stays empty. */
  readonly errors: string[] = [];
  /** Order answers other than accepted or the failover's own refusals, with their bodies. */
  readonly oddAnswers: string[] = [];
  private running = false;
  private paused = false;
  private idle = true;
  private loop: Promise<void> | null = null;
  private n = 0;

  constructor(
    private readonly d: Deployment,
    private apiBase: string,
    private readonly probe: LedgerProbe,
  ) {}

  setApi(base: string): void {
    this.apiBase = base;
  }

  private async metaApi(body: Record<string, unknown>): Promise<{ positionId?: string | number }> {
    const { hosts, token } = this.d.sim.endpoints.platforma;
    // Trades go to the account's region client-API host (the Master is in the default region, new-york).
    const base = Object.entries(hosts ?? {}).find(([h]) => h.startsWith('mt-client-api-v1.new-york.'))?.[1];
    if (!base) throw new Error('the simulator lists no new-york client-API host');
    const res = await fetch(`${base}/users/current/accounts/${this.d.masterMetaApiId}/trade`, {
      method: 'POST',
      headers: { 'auth-token': token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { stringCode?: string; positionId?: string | number };
    if (json.stringCode !== 'TRADE_RETCODE_DONE') throw new Error(`direct trade refused: ${JSON.stringify(json)}`);
    return json;
  }

  /** One order through the api; its status (202 accepted, 503 while no worker holds the Master, ...). */
  async apiOrder(volume = VOLUMES[this.n % VOLUMES.length]!): Promise<number> {
    const res = await fetch(`${this.apiBase}/v1/accounts/${this.d.masterId}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.d.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ symbol: 'EURUSD', side: 'buy', volume }),
    }).catch(() => null);
    if (!res) {
      this.counts.apiRefused.network = (this.counts.apiRefused.network ?? 0) + 1;
      return 0;
    }
    const body = await res.text();
    if (res.status === 202) this.counts.apiAccepted++;
    else this.counts.apiRefused[res.status] = (this.counts.apiRefused[res.status] ?? 0) + 1;
    // 503 (nobody holds the Master yet) and 409 (answer lost with a killed worker, or a lease lost mid-order) are
    // the failover's own answers; 429 slaves_backlogged is admission control while Slaves' copies wait to settle.
    const expected = [202, 503, 409].includes(res.status) || (res.status === 429 && body.includes('slaves_backlogged'));
    if (!expected) this.oddAnswers.push(`${res.status} ${body.slice(0, 300)}`);
    return res.status;
  }

  /** Opens a position at the Master's broker, as a trader would by hand; its position id. */
  async directOpen(): Promise<string> {
    const side = this.n % 2 === 0 ? 'ORDER_TYPE_BUY' : 'ORDER_TYPE_SELL';
    const done = await this.metaApi({ actionType: side, symbol: 'GBPUSD', volume: VOLUMES[this.n % VOLUMES.length] });
    this.counts.directOpens++;
    return String(done.positionId);
  }

  /** Closes one Master position at its broker by id. */
  async directCloseId(positionId: string): Promise<void> {
    await this.metaApi({ actionType: 'POSITION_CLOSE_ID', positionId });
    this.counts.directCloses++;
  }

  /** Closes the Master's oldest position at its broker (an open when it holds none). */
  async directClose(): Promise<void> {
    const held = await this.d.positionsOf(this.d.masterSimId);
    if (held.length < 3) {
      await this.directOpen();
      return;
    }
    await this.directCloseId(held[0]!.id);
  }

  async step(): Promise<void> {
    const before = await this.probe.trades();
    const kind = this.n++ % 3;
    if (kind === 0) await this.apiOrder();
    else if (kind === 1) await this.directOpen();
    else await this.directClose();
    // Paced by the ledger: the action recorded and its copies out, or 3 s (a failover in progress) at most.
    const end = Date.now() + 3000;
    while (Date.now() < end) {
      if ((await this.probe.trades()) > before && (await this.probe.open()) === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        if (this.paused) {
          this.idle = true;
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        this.idle = false;
        await this.step().catch((err: unknown) => this.errors.push(String(err)));
      }
      this.idle = true;
    })();
  }

  /** Stops taking new actions; resolves once the one in progress is done. */
  async pause(): Promise<void> {
    this.paused = true;
    while (!this.idle) await new Promise((r) => setTimeout(r, 20));
  }

  resume(): void {
    this.paused = false;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/** A deployment (simulator, workers, an api) with the ledger probe and the Master flow the process tests share. */
export interface FlowingDeployment {
  d: Deployment;
  probe: LedgerProbe;
  flow: MasterFlow;
  apiBase: string;
  /** Stops the flow, every process started and the deployment (its database and simulator). */
  close(): Promise<void>;
}

/**
 * Starts the deployment, `workers` workers (one after the other, or all at once with `together`), then the api,
 * and the flow on the deployment's Master. A start that fails stops what it started.
 */
export async function startFlowingDeployment(
  start: () => Promise<Deployment>,
  o: { workers: number; together?: boolean },
): Promise<FlowingDeployment> {
  const d = await start();
  let apiBase: string;
  try {
    if (o.together) await Promise.all(Array.from({ length: o.workers }, () => d.startWorker()));
    else for (let i = 0; i < o.workers; i++) await d.startWorker();
    apiBase = await d.startApi();
  } catch (err) {
    killStarted();
    await d.close();
    throw err;
  }
  const probe = new LedgerProbe(d.roleEnv.DATABASE_URL!, d.masterId);
  const flow = new MasterFlow(d, apiBase, probe);
  return {
    d,
    probe,
    flow,
    apiBase,
    close: async () => {
      await flow.stop();
      killStarted();
      await probe.close();
      await d.close();
    },
  };
}
