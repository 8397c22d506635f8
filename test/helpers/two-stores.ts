import { Store } from '../../src/store/store.js';
import { tempDatabase } from './postgres.js';

/** Two Store objects on one fresh PostgreSQL database: they stand for two processes of one deployment. */
export async function twoStores(): Promise<{ a: Store; b: Store; close(): Promise<void> }> {
  const db = await tempDatabase();
  const a = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
  const b = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, migrate: false });
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await db.drop();
    },
  };
}
