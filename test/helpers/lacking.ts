import type { Capabilities, CapabilityFlag } from '../../src/domain/capabilities.js';
import type { AdapterFactory, BrokerAdapter } from '../../src/platforms/adapter.js';
import { guardCapabilities } from '../../src/platforms/capability-guard.js';

export type Lack = CapabilityFlag | 'quotes';

/** What `adapter` would declare on a platform without `off`; everything else as the adapter says. */
export function capabilitiesWithout(caps: Capabilities, off: readonly Lack[]): Capabilities {
  return { ...caps, has: { ...caps.has, ...Object.fromEntries(off.map((f) => [f, false])) } };
}

/**
 * The adapter as it would be on a platform that lacks `off`: it declares those flags false and refuses the
 * calls that need them through the adapter kit's guard. No adapter lacks anything today, so this is how the
 * capability paths of the planner, the engine and the conformance suite run at all.
 */
export function lacking(adapter: BrokerAdapter, off: readonly Lack[]): BrokerAdapter {
  return guardCapabilities(adapter, () => capabilitiesWithout(adapter.capabilities, off));
}

/** A factory whose adapters lack `off` for the broker accounts `which` selects (all when omitted). */
export function lackingFactory(
  factory: AdapterFactory,
  off: readonly Lack[],
  which: (brokerAccountId: string) => boolean = () => true,
): AdapterFactory {
  return {
    platform: factory.platform,
    capabilities: factory.capabilities,
    async create(account) {
      const adapter = await factory.create(account);
      return which(account.brokerAccountId) ? lacking(adapter, off) : adapter;
    },
  };
}
