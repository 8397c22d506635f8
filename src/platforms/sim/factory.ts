import { AppError } from '../../domain/errors.js';
import type { SimBrokerApi } from '../../simulator/contract.js';
import type { AdapterFactory } from '../adapter.js';
import { SimAdapter } from './adapter.js';
import { SIM_CAPABILITIES } from './capabilities.js';

/** The stored account's brokerAccountId is the simulated account's id; sim accounts need no credentials. */
export function createSimAdapterFactory(broker: SimBrokerApi, opts: { timeoutMs?: number } = {}): AdapterFactory {
  return {
    platform: 'sim',
    capabilities: SIM_CAPABILITIES,
    async create(account) {
      if (!broker.account(account.brokerAccountId)) {
        throw new AppError('not_found', `sim account ${account.brokerAccountId} not found`, {
          details: { accountId: account.id },
        });
      }
      return new SimAdapter(broker, account.brokerAccountId, opts);
    },
  };
}
