import type { CTraderConnection, CTraderEndpoint } from './connection.js';

/** One endpoint's connections, and where each adapter's account is now. */
export interface EndpointPool {
  endpoint: CTraderEndpoint;
  name: string;
  conns: Map<string, CTraderConnection>;
  /** Lowered when the server refuses a connection for the application. */
  cap: number;
  opened: number;
  /** By ctidTraderAccountId: the connection the account is on now, shared by its adapters. */
  homes: Map<string, { conn: CTraderConnection; adapters: number }>;
}

export type AccountHome = { conn: CTraderConnection; adapters: number };

/**
 * Accounts of one endpoint are spread over a few connections, each with its own rate window (50 requests a
 * second; fact sheet §7): a fan-out to 50 Slaves on one connection paid a second for its last 25 copies (issue 12).
 * An account goes to the connection with the fewest accounts; a new one is opened only when all are at
 * `perConnection` and the cap allows, so a few accounts still share one connection.
 */
export class ConnectionPools {
  private readonly pools = new Map<string, EndpointPool>();
  /** Every connection, keyed `host:port#i`. */
  readonly all = new Map<string, CTraderConnection>();

  constructor(
    private readonly perConnection: number,
    private readonly maxConnections: number,
    /** Opens a connection; `onRefused` is what its "connections limit exceeded" answer must call. */
    private readonly connect: (endpoint: CTraderEndpoint, onRefused: () => void) => CTraderConnection,
  ) {}

  /** The connection an account is on (placing it first when new) and its pool. */
  place(endpoint: CTraderEndpoint, ctid: string): { pool: EndpointPool; home: AccountHome } {
    const name = `${endpoint.host}:${endpoint.port}`;
    let pool = this.pools.get(name);
    if (!pool) {
      pool = { endpoint, name, conns: new Map(), cap: this.maxConnections, opened: 0, homes: new Map() };
      this.pools.set(name, pool);
    }
    // An account already open here stays on its connection: one authorisation, one stream of its events.
    let home = pool.homes.get(ctid);
    if (!home) {
      const best = fewest(pool.conns.values());
      const fits = best && (best.accountCount() < this.perConnection || pool.conns.size >= pool.cap);
      home = { conn: fits ? best : this.open(pool), adapters: 0 };
      pool.homes.set(ctid, home);
    }
    home.adapters += 1;
    return { pool, home };
  }

  /** An adapter closed: its account leaves its connection, and a connection left with none is closed. */
  async release(pool: EndpointPool, ctid: string, home: AccountHome): Promise<void> {
    if (--home.adapters <= 0 && pool.homes.get(ctid) === home) pool.homes.delete(ctid);
    const at = home.conn;
    if (!at.removeAccount(ctid)) return;
    const key = [...pool.conns].find(([, c]) => c === at)?.[0];
    if (key !== undefined) await this.drop(pool, key, at);
  }

  async closeAll(): Promise<void> {
    const conns = [...this.all.values()];
    this.all.clear();
    // Adapters closed after this find nothing of theirs to close (and no key of a later connection to drop).
    for (const pool of this.pools.values()) pool.conns.clear();
    this.pools.clear();
    await Promise.all(conns.map((c) => c.close()));
  }

  private open(pool: EndpointPool): CTraderConnection {
    const key = `${pool.name}#${pool.opened++}`;
    const conn: CTraderConnection = this.connect(pool.endpoint, () => this.refused(pool, key, conn));
    pool.conns.set(key, conn);
    this.all.set(key, conn);
    return conn;
  }

  private drop(pool: EndpointPool, key: string, conn: CTraderConnection): Promise<void> {
    if (pool.conns.get(key) !== conn) return Promise.resolve();
    pool.conns.delete(key);
    this.all.delete(key);
    return conn.close();
  }

  /**
   * The server has no room for this connection: keep the pool to the ones it has, and move this one's accounts
   * onto them (they were never authorised here, or lost that with the link). Alone, it keeps retrying as any
   * connection refused at start-up does: the other connections holding the application's room may go away.
   */
  private refused(pool: EndpointPool, key: string, conn: CTraderConnection): void {
    const others = [...pool.conns.values()].filter((c) => c !== conn);
    if (others.length === 0 || pool.conns.get(key) !== conn) return;
    pool.cap = Math.min(pool.cap, others.length);
    for (const ctid of conn.accountIds()) {
      const to = fewest(others)!;
      conn.handOver(ctid, to);
      const home = pool.homes.get(ctid);
      if (home?.conn === conn) home.conn = to;
    }
    void this.drop(pool, key, conn);
  }
}

function fewest(conns: Iterable<CTraderConnection>): CTraderConnection | null {
  let best: CTraderConnection | null = null;
  for (const c of conns) if (!best || c.accountCount() < best.accountCount()) best = c;
  return best;
}
