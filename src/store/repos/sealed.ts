import { and, eq, isNotNull, type AnyColumn } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../db.js';
import { accounts, alertChannels, users, webhookEndpoints } from '../schema.js';

/** Every column that holds a value sealed by the credential box (see auth/credential-box.ts). */
const COLUMNS = {
  'accounts.credentials_enc': {
    table: accounts,
    id: accounts.id,
    col: accounts.credentialsEnc,
    field: 'credentialsEnc',
  },
  'webhook_endpoints.secret_enc': {
    table: webhookEndpoints,
    id: webhookEndpoints.id,
    col: webhookEndpoints.secretEnc,
    field: 'secretEnc',
  },
  'webhook_endpoints.previous_secret_enc': {
    table: webhookEndpoints,
    id: webhookEndpoints.id,
    col: webhookEndpoints.previousSecretEnc,
    field: 'previousSecretEnc',
  },
  'alert_channels.secret_enc': {
    table: alertChannels,
    id: alertChannels.id,
    col: alertChannels.secretEnc,
    field: 'secretEnc',
  },
  'users.totp_secret_enc': {
    table: users,
    id: users.id,
    col: users.totpSecretEnc,
    field: 'totpSecretEnc',
  },
} satisfies Record<string, { table: PgTable; id: AnyColumn; col: AnyColumn; field: string }>;

export type SealedColumn = keyof typeof COLUMNS;
export interface SealedValue {
  column: SealedColumn;
  id: string;
  sealed: string;
}

/** Sealed values across tables, for re-sealing them under a new key (copytrade secrets rotate). */
export class SealedRepo {
  constructor(private readonly db: Db) {}

  async all(): Promise<SealedValue[]> {
    const out: SealedValue[] = [];
    for (const [column, c] of Object.entries(COLUMNS) as Array<[SealedColumn, (typeof COLUMNS)[SealedColumn]]>) {
      const rows = await this.db.select({ id: c.id, sealed: c.col }).from(c.table).where(isNotNull(c.col));
      for (const r of rows) out.push({ column, id: r.id as string, sealed: r.sealed as string });
    }
    return out;
  }

  /** Compare-and-set: replaced only if the row still holds `v.sealed` (a value changed meanwhile is left to the next pass). */
  async replace(v: SealedValue, next: string): Promise<boolean> {
    const c = COLUMNS[v.column];
    const rows = await this.db
      .update(c.table)
      .set({ [c.field]: next } as never)
      .where(and(eq(c.id, v.id), eq(c.col, v.sealed)))
      .returning({ id: c.id });
    return rows.length > 0;
  }
}
