import { eq } from 'drizzle-orm';
import type { ConnectionTest } from '../../domain/connection-test.js';
import type { Db } from '../db.js';
import { accountConnectionTests } from '../schema.js';

/** The last connection test of each account (see `account_connection_tests` in schema.ts). */
export class ConnectionTestsRepo {
  constructor(private readonly db: Db) {}

  async last(accountId: string): Promise<ConnectionTest | null> {
    const [r] = await this.db
      .select({ result: accountConnectionTests.result })
      .from(accountConnectionTests)
      .where(eq(accountConnectionTests.accountId, accountId))
      .limit(1);
    return (r?.result as ConnectionTest | undefined) ?? null;
  }

  async put(accountId: string, test: ConnectionTest): Promise<void> {
    const checkedAt = new Date(test.checkedAt);
    await this.db
      .insert(accountConnectionTests)
      .values({ accountId, result: test, checkedAt })
      .onConflictDoUpdate({ target: accountConnectionTests.accountId, set: { result: test, checkedAt } });
  }
}
