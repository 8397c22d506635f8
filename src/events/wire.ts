import type { EventRow } from '../store/repos/events.js';

/** An event as every consumer sees it: webhook body, stream message, list item. */
export interface WireEvent {
  id: string;
  type: string;
  timestamp: string;
  accountId: string | null;
  sequence: number;
  schemaVersion: number;
  data: Record<string, unknown>;
}

export const toWireEvent = (row: EventRow): WireEvent => ({
  id: row.id,
  type: row.type,
  timestamp: row.createdAt.toISOString(),
  accountId: row.accountId,
  sequence: row.seq,
  schemaVersion: row.schemaVersion,
  data: row.payload as Record<string, unknown>,
});
