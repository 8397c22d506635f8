import { openDatabase, type Database, type OpenOptions } from './db.js';
import { AccountsRepo } from './repos/accounts.js';
import { CredentialsRepo } from './repos/credentials.js';
import { EventsRepo } from './repos/events.js';
import { RequestsRepo } from './repos/requests.js';
import { TradesRepo } from './repos/trades.js';
import { UsersRepo } from './repos/users.js';

/** The store port: one object with a repository per concern, on PGlite or PostgreSQL alike. */
export class Store {
  readonly users: UsersRepo;
  readonly credentials: CredentialsRepo;
  readonly accounts: AccountsRepo;
  readonly trades: TradesRepo;
  readonly requests: RequestsRepo;
  readonly events: EventsRepo;

  constructor(readonly database: Database) {
    const db = database.db;
    this.events = new EventsRepo(db);
    this.users = new UsersRepo(db, this.events);
    // The embedded store has exactly one writer (this process), so read caches cannot go stale there.
    const cache = database.kind === 'pglite';
    this.credentials = new CredentialsRepo(db, { cache });
    this.accounts = new AccountsRepo(db, { cache });
    this.trades = new TradesRepo(db, this.events);
    this.requests = new RequestsRepo(db);
  }

  static async open(opts: OpenOptions): Promise<Store> {
    return new Store(await openDatabase(opts));
  }

  async close(): Promise<void> {
    await this.requests.flush().catch(() => undefined);
    await this.database.close();
  }
}
