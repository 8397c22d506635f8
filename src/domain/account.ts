import type { Decimal } from './decimal.js';
import type { AccountStatus, Health, Platform, Role } from './types.js';

export interface Account {
  id: string;
  userId: string;
  platform: Platform;
  role: Role;
  status: AccountStatus;
  statusReason: string | null;
  name: string;
  groupId: string | null;
  brokerAccountId: string;
  brokerAccountNumber: string;
  brokerName: string | null;
  environment: string | null;
  currency: string | null;
  /** Deployment-wide identity of the broker account (domain/broker-identity.ts); null on a disabled duplicate. */
  brokerIdentity: string | null;
  health: Health;
  balance: Decimal | null;
  equity: Decimal | null;
  /** Set once the user removed the connection: only the history still refers to it, nothing acts on it. */
  removedAt?: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface CopierGroup {
  id: string;
  userId: string;
  name: string;
  createdAt: Date;
}

export const initialHealth = (): Health => ({
  state: 'ok',
  connected: true,
  tradingAllowed: true,
  inSync: true,
  dataStale: false,
  reconnectRequired: false,
  checkedAt: null,
  lastError: null,
});

/**
 * Stopped by someone's choice (the user, a panic-close, the risk guard), not by the broker: health never overrides
 * it, and nothing adds exposure to it, not even a resend of a write made before the stop.
 */
export function isStoppedByChoice(status: AccountStatus): boolean {
  return status === 'paused' || status === 'locked' || status === 'disabled';
}

/** A status a health read leaves as it is: stopped by choice, or waiting for a connection test to pass. */
export function keepsItsStatus(status: AccountStatus): boolean {
  return isStoppedByChoice(status) || status === 'unverified';
}

/** A Slave is eligible for a copy when it is in the group, copying, and its broker is reachable. */
export function isEligibleSlave(a: Account): boolean {
  return a.role === 'slave' && a.status === 'connected' && a.health.tradingAllowed && !a.health.reconnectRequired;
}
