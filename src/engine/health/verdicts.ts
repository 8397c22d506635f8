import { AppError } from '../../domain/errors.js';
import type { Health } from '../../domain/types.js';

/*
 * What one broker read says of an account's health. Every verdict keeps what it does not speak of (inSync is
 * the reconciler's, not the read's).
 */

/** The broker answered: connected and trading; degraded only while the reconciler finds the books out of sync. */
export const answered = (h: Health, now: number): Health => ({
  ...h,
  state: h.inSync ? 'ok' : 'degraded',
  connected: true,
  tradingAllowed: true,
  dataStale: false,
  reconnectRequired: false,
  checkedAt: new Date(now).toISOString(),
  lastError: null,
});

/** The broker refused our access (OAuth): down until the user connects the account again. */
export const refusedAccess = (h: Health, now: number, stale: boolean, message: string): Health => ({
  ...h,
  state: 'down',
  connected: false,
  tradingAllowed: false,
  reconnectRequired: true,
  dataStale: stale,
  checkedAt: new Date(now).toISOString(),
  lastError: message,
});

/** The broker is there, only busy (or slow for a while): what we know stays, with why the data may lag. */
export const busy = (h: Health, now: number, stale: boolean, message: string): Health => ({
  ...h,
  state: 'degraded',
  dataStale: stale,
  checkedAt: new Date(now).toISOString(),
  lastError: message,
});

/** Its reads have failed for long enough while we were running: an outage. */
export const down = (h: Health, now: number, stale: boolean, message: string): Health => ({
  ...h,
  state: 'down',
  connected: false,
  tradingAllowed: false,
  dataStale: stale,
  checkedAt: new Date(now).toISOString(),
  lastError: message,
});

/** The fields whose change is an event. */
export const pick = (h: Health) => ({
  state: h.state,
  connected: h.connected,
  tradingAllowed: h.tradingAllowed,
  inSync: h.inSync,
  dataStale: h.dataStale,
  reconnectRequired: h.reconnectRequired,
});

/**
 * The connection itself reports the account's terminal gone (a bridge EA without heartbeats): no pressure to
 * tell from an outage, it is down now.
 */
export const saysDown = (err: unknown): boolean => err instanceof AppError && err.details?.['connectionDown'] === true;
