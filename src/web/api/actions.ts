import { http } from './client';
import type { Group } from './types';

/**
 * Routes the dashboard calls that the generated client does not know yet (added with issue 14): group and
 * account actions, equity history, demo logins. Same auth and error handling as the typed clients.
 */
const enc = encodeURIComponent;

export const renameGroup = (id: string, name: string) =>
  http<Group>('PATCH', `/app/v1/copier-groups/${enc(id)}`, { name });
export const deleteGroup = (id: string, force = false) =>
  http<void>('DELETE', `/app/v1/copier-groups/${enc(id)}${force ? '?force=true' : ''}`);
export const setGroupCopying = (id: string, action: 'pause' | 'resume') =>
  http<Group>('POST', `/app/v1/copier-groups/${enc(id)}/${action}`);
export const removeAccount = (id: string, force = false) =>
  http<void>('DELETE', `/app/v1/accounts/${enc(id)}${force ? '?force=true' : ''}`);

export interface PositionOutcome {
  outcome: string;
  brokerOrderId: string | null;
  positionId: string | null;
  filledVolume: number | null;
  fillPrice: number | null;
}
export const closePosition = (accountId: string, positionId: string, volume?: number) =>
  http<PositionOutcome>(
    'POST',
    `/app/v1/accounts/${enc(accountId)}/positions/${enc(positionId)}/close`,
    volume === undefined ? {} : { volume },
  );
export const modifyPosition = (
  accountId: string,
  positionId: string,
  levels: { stopLoss: number | null; takeProfit: number | null },
) => http<PositionOutcome>('PATCH', `/app/v1/accounts/${enc(accountId)}/positions/${enc(positionId)}`, levels);

export interface RiskLimits {
  maxDrawdownPercent: string | null;
  dailyLossLimit: string | null;
  maxOpenVolume: string | null;
  onBreach: 'pause' | 'close_and_pause' | null;
  dayResetHourUtc: number | null;
  requireStopLoss: boolean | null;
}
export interface RiskView {
  targetId: string;
  scope: string;
  limits: RiskLimits;
  state:
    | ({ lastBreach: { rule: string; detail: string; at: string; action: string } | null } & Record<string, unknown>)
    | null;
}
export const getRiskLimits = (scope: 'accounts' | 'copier-groups', id: string) =>
  http<RiskView>('GET', `/app/v1/${scope}/${enc(id)}/risk-limits`);
export const setRiskLimits = (
  scope: 'accounts' | 'copier-groups',
  id: string,
  limits: Partial<RiskLimits> & { resetPeak?: boolean },
) => http<RiskView>('PUT', `/app/v1/${scope}/${enc(id)}/risk-limits`, limits);

export type EquityRange = '1h' | '24h' | '7d';
export interface EquityHistory {
  accountId: string;
  from: string;
  to: string;
  bucketSeconds: number;
  points: Array<{ t: string; balance: number; equity: number }>;
}
export const equityHistory = (accountId: string, range: EquityRange) =>
  http<EquityHistory>('GET', `/app/v1/accounts/${enc(accountId)}/equity-history?range=${range}&points=240`);

export interface DemoLogins {
  platforma: Array<{ platform: string; server: string; login: string; password: string; balance: string }>;
  platformb: Array<{
    environment: string;
    server: string;
    email: string;
    password: string;
    accountNumber: string;
    balance: string;
  }>;
  platformc: Array<{ ctidUser: string; environment: string; accountNumber: string; balance: string }>;
  platformd: Array<{
    environment: string;
    server: string;
    username: string;
    domain: string;
    password: string;
    account: string;
    balance: string;
  }>;
}
/** Demo mode only; null where the service is not a demo (the route does not exist there). */
export async function demoLogins(): Promise<DemoLogins | null> {
  try {
    return await http<DemoLogins>('GET', '/app/demo/broker-logins');
  } catch {
    return null;
  }
}
