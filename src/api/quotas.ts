import { AppError } from '../domain/errors.js';
import { DEFAULT_QUOTAS, type QuotaConfig } from '../config/quotas-config.js';

const WHAT: Record<keyof QuotaConfig, string> = {
  copierGroups: 'copier groups',
  apiKeys: 'active API keys',
  webhookEndpoints: 'webhook endpoints',
  accounts: 'connected accounts',
  eventStreamsPerKey: 'open event streams per credential',
};

/** The OpenAPI description of a quota (x-open-point: the number is ours, see docs/open-points.md). */
export const QUOTA_NOTE = (name: keyof QuotaConfig, env: string, more = ''): string =>
  `Quota (our choice, x-open-point): at most ${DEFAULT_QUOTAS[name]} ${WHAT[name]} by default (COPYTRADE_QUOTA_${env}; 0 = none); one more is refused with ` +
  `${name === 'eventStreamsPerKey' ? '429 stream_quota_exceeded' : '409 quota_exceeded'} naming the quota in the message and in \`quota\`${more ? `; ${more}` : ''}.`;

/** 409 quota_exceeded (429 stream_quota_exceeded for streams) once `used` has reached the quota; 0 = no limit. */
export function enforceQuota(quotas: QuotaConfig, name: keyof QuotaConfig, used: number): void {
  const limit = quotas[name];
  if (limit === 0 || used < limit) return;
  const stream = name === 'eventStreamsPerKey';
  throw new AppError(
    stream ? 'stream_quota_exceeded' : 'quota_exceeded',
    `quota ${name} exceeded: at most ${limit} ${WHAT[name]}${stream ? '; close one first' : ' per user; remove one first'}`,
    { details: { quota: name, limit } },
  );
}
