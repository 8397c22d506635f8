import { Store } from '../../src/store/store.js';
import { storeContract } from './store-contract.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { describe } from 'vitest';

const available = await requirePostgres();

describe.runIf(available)('PostgreSQL server', () => {
  storeContract('PostgreSQL (server)', async () => {
    const db = await tempDatabase();
    return { store: await Store.open({ dataDir: ':unused:', databaseUrl: db.url }), cleanup: db.drop };
  });
});
