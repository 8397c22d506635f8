import type { SimBrokerApi } from '../simulator/contract.js';
import { SimulatedEa } from '../simulator/ea/sim-ea.js';

/** Where a demo EA dials: the service's bridge endpoint, with the account's token. */
export interface DemoEaTarget {
  /** The simulated account the EA trades on. */
  accountId: string;
  url: string;
  token: string;
}

/**
 * The demo's simulated Expert Advisors, one per simulated account, in whichever process holds the simulated
 * broker (the `copytrade simulator` process, or the service itself in-process). Starting one for an account that
 * has one replaces it: a restarted service hands over a new token. An EA whose service is gone redials every
 * second, as a terminal's EA would.
 */
export class DemoEas {
  private readonly eas = new Map<string, SimulatedEa>();

  constructor(private readonly broker: SimBrokerApi) {}

  async start(t: DemoEaTarget): Promise<void> {
    if (!this.broker.account(t.accountId)) throw new Error(`no simulated account ${t.accountId}`);
    await this.eas.get(t.accountId)?.stop();
    const ea = new SimulatedEa({
      broker: this.broker,
      accountId: t.accountId,
      url: t.url,
      token: t.token,
      reconnectMs: 1_000,
    });
    this.eas.set(t.accountId, ea);
    ea.start();
  }

  async stopAll(): Promise<void> {
    const all = [...this.eas.values()];
    this.eas.clear();
    await Promise.all(all.map((ea) => ea.stop()));
  }
}
