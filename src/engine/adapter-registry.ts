import type { Account } from '../domain/account.js';
import { AppError, notFound } from '../domain/errors.js';
import type { Platform } from '../domain/types.js';
import type { AdapterFactory, BrokerAdapter, Capabilities } from '../platforms/adapter.js';

/** Opens broker credentials sealed at rest; the engine never sees the key. */
export interface CredentialOpener {
  open(accountId: string): Promise<Record<string, unknown> | null>;
}

type AccountRef = Pick<Account, 'id' | 'platform' | 'brokerAccountId' | 'environment' | 'removedAt'>;

/**
 * Hands out another adapter for an account instead of its broker's (shadow mode: a Slave's simulated twin),
 * or null to let the broker's own adapter serve it. Asked on every `forAccount` call.
 */
export type AdapterResolver = (account: AccountRef) => Promise<BrokerAdapter> | null;

/** What each adapter promise the registry built resolved to, once it has (`builtAdapter`). */
const built = new WeakMap<Promise<BrokerAdapter>, BrokerAdapter>();

/**
 * The adapter a promise from `forAccount` resolved to, when the registry built it and it has resolved; undefined
 * otherwise (await it then). A fan-out asks for the adapters of all its Slaves, mostly built long before: read
 * from here they cost no callback and no microtask each.
 */
export function builtAdapter(p: Promise<BrokerAdapter>): BrokerAdapter | undefined {
  return built.get(p);
}

/**
 * One live adapter per account, built on first use by the platform's factory and reused: adapters hold
 * connections, tokens and rate budgets that must not be duplicated.
 */
export class AdapterRegistry {
  private readonly factories = new Map<Platform, AdapterFactory>();
  private readonly live = new Map<string, Promise<BrokerAdapter>>();
  private resolver: AdapterResolver | null = null;

  constructor(private readonly credentials: CredentialOpener) {}

  register(factory: AdapterFactory): void {
    this.factories.set(factory.platform, factory);
  }

  platforms(): Platform[] {
    return [...this.factories.keys()];
  }

  capabilities(platform: Platform): Capabilities | null {
    return this.factories.get(platform)?.capabilities ?? null;
  }

  /** The resolver hook (main.ts wires shadow mode's); asked first by every `forAccount`, so wiring order does not matter. */
  resolveWith(resolver: AdapterResolver | null): void {
    this.resolver = resolver;
  }

  /** The adapter everything that acts for an account uses: the resolver's, else the broker's own. */
  forAccount(account: AccountRef): Promise<BrokerAdapter> {
    return this.resolver?.(account) ?? this.brokerAdapter(account);
  }

  /** The broker's own adapter for the account, whatever the resolver hands out. */
  brokerAdapter(account: AccountRef): Promise<BrokerAdapter> {
    // A removed connection's row stays for the history (store.accounts.byId still returns it); nothing trades on it.
    if (account.removedAt) return Promise.reject(notFound('account'));
    const existing = this.live.get(account.id);
    if (existing) return existing;
    const factory = this.factories.get(account.platform);
    if (!factory)
      return Promise.reject(
        new AppError('upstream_unavailable', `platform ${account.platform} is not enabled in this deployment`),
      );
    const created = (async () => {
      const credentials = await this.credentials.open(account.id);
      return factory.create({
        id: account.id,
        brokerAccountId: account.brokerAccountId,
        environment: account.environment,
        credentials,
      });
    })();
    // A failed build must not stick: the next call tries again (e.g. after the broker came back).
    created.then(
      (adapter) => built.set(created, adapter),
      () => this.live.delete(account.id),
    );
    this.live.set(account.id, created);
    return created;
  }

  /** Drops the cached adapter (credentials changed, or the connection must be rebuilt). */
  async evict(accountId: string): Promise<void> {
    const a = this.live.get(accountId);
    this.live.delete(accountId);
    if (a) await (await a.catch(() => null))?.close();
  }

  async closeAll(): Promise<void> {
    const all = [...this.live.keys()];
    await Promise.all(all.map((id) => this.evict(id)));
  }
}
