import type { PlatformEndpoints } from '../platforms/endpoints.js';
import type { TokenPair } from '../simulator/ctrader/index.js';
import type { SimAccountInit, SimBrokerApi } from '../simulator/contract.js';
import type { SimulatedBrokers } from './simulated-brokers.js';
import { DemoEas, type DemoEaTarget } from './demo-eas.js';

/** What the demo needs to know of a simulated account (balance omitted: it is a Decimal in-process, a string remote). */
export interface DemoSimAccount {
  id: string;
  login: string;
  meta: Record<string, string>;
  /** The cTrader Open API's id of an account of a simulated cTrader ID user (meta.ctidUserId). */
  ctidTraderAccountId?: string;
}

/**
 * The simulated brokers as the demo seeding sees them, wherever they run: in this process (tests, paper trading)
 * or in a `copytrade simulator` process reached over its control API.
 */
export interface DemoBrokers {
  endpoints: PlatformEndpoints;
  /** True when the `sim` platform adapter trades on this same market (in-process only). */
  hostsSimPlatform: boolean;
  /**
   * Names the OAuth tokens and MetaApi accounts these brokers keep across their restarts (a `copytrade simulator`
   * process); null when they keep none (in-process: they die with this process).
   */
  stateId: string | null;
  createAccount(init: SimAccountInit): Promise<DemoSimAccount>;
  accounts(): Promise<DemoSimAccount[]>;
  /** Tokens of a simulated cTrader ID user (the demo's stand-in for the OAuth consent page). */
  issueCTraderToken(ctidUserId: string): Promise<TokenPair>;
  /** Starts (or restarts) a simulated terminal EA on a simulated account, dialling the service's bridge. */
  startEa(t: DemoEaTarget): Promise<void>;
  /** Stops the EAs this process started (in-process); a simulator process's EAs outlive the service. */
  stopEas(): Promise<void>;
}

/** The demo's view of a simulated account; `ctidOf` names it on the cTrader front end. */
export const demoView = (
  a: { id: string; login: string; meta: Record<string, string> },
  ctidOf: (id: string) => string,
): DemoSimAccount => ({
  id: a.id,
  login: a.login,
  meta: { ...a.meta },
  ...(a.meta.ctidUserId ? { ctidTraderAccountId: ctidOf(a.id) } : {}),
});

export function inProcessBrokers(broker: SimBrokerApi, simulated: SimulatedBrokers): DemoBrokers {
  const view = (a: Parameters<typeof demoView>[0]) => demoView(a, simulated.ctrader.ctidTraderAccountIdOf);
  const eas = new DemoEas(broker);
  return {
    startEa: (t) => eas.start(t),
    stopEas: () => eas.stopAll(),
    endpoints: simulated.endpoints,
    hostsSimPlatform: true,
    stateId: null,
    createAccount: async (init) => view(broker.createAccount(init)),
    accounts: async () => broker.accounts().map(view),
    issueCTraderToken: async (user) => simulated.ctrader.issueTokenFor(user),
  };
}
