import type { Account } from '../domain/account.js';
import { Decimal, type DecimalValue } from '../domain/decimal.js';
import { invalid } from '../domain/errors.js';
import type { AdapterFactory, BrokerAdapter } from '../platforms/adapter.js';
import type { ShadowTwinsRepo, ShadowTwinRow } from '../store/repos/shadow-twins.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';

/** The part of the in-process simulated broker shadow mode needs: open an account, and know whether it exists. */
export interface TwinBroker {
  createAccount(init: { balance: DecimalValue; currency?: string; hedging?: boolean; meta?: Record<string, string> }): {
    id: string;
    login: string;
  };
  account(id: string): { id: string; login: string } | null;
}

export interface ShadowStatus {
  accountId: string;
  enabled: boolean;
  twinAccountId: string | null;
  twinAccountNumber: string | null;
  startBalance: string | null;
  balance: string | null;
  equity: string | null;
}

export const SHADOW_REASON_PREFIX = 'shadow mode:';

/**
 * Shadow mode: while it is on, a Slave's adapter is a simulated twin (same balance, same rules) in the
 * in-process simulator, so every copy is planned, recorded and filled exactly as it would be, only nothing
 * reaches the broker. `resolve` is the registry's resolver hook (main.ts wires it): everything that asks the
 * registry for the Slave's adapter (fan-out, panic-close, risk monitor, position reads) sees the twin, and
 * nothing else changes.
 */
export class ShadowService {
  readonly repo: ShadowTwinsRepo;
  private readonly twins = new Map<string, ShadowTwinRow>();
  private readonly live = new Map<string, Promise<BrokerAdapter>>();

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly broker: TwinBroker,
    private readonly simFactory: AdapterFactory,
  ) {
    this.repo = store.shadowTwins;
  }

  async load(): Promise<void> {
    this.twins.clear();
    for (const r of await this.repo.all()) this.twins.set(r.accountId, r);
  }

  /** The registry's resolver: a shadowed Slave's twin, or null (its broker's own adapter). */
  readonly resolve = (account: { id: string }): Promise<BrokerAdapter> | null => {
    const twin = this.twins.get(account.id);
    return twin?.enabled ? this.twinAdapter(account.id, twin) : null;
  };

  isShadowed(accountId: string): boolean {
    return this.twins.get(accountId)?.enabled ?? false;
  }

  async enable(account: Account): Promise<ShadowStatus> {
    if (account.role !== 'slave')
      throw invalid(`account ${account.id} is a ${account.role}; shadow mode is for Slaves`);
    const existing = this.twins.get(account.id);
    if (existing?.enabled) return this.status(account);
    // The twin starts from the broker's balance now, so sizing by balance or equity previews what live would do.
    const real = await this.adapters.brokerAdapter(account).catch(() => null);
    const info = real ? await real.accountInfo().catch(() => null) : null;
    const balance = info?.balance ?? account.balance ?? new Decimal(0);
    const sim = this.broker.createAccount({
      balance,
      currency: info?.currency ?? account.currency ?? 'USD',
      hedging: real?.capabilities.hedging ?? true,
      meta: { shadowOf: account.id },
    });
    const row = await this.repo.upsert({
      accountId: account.id,
      simAccountId: sim.id,
      enabled: true,
      startBalance: balance.toString(),
    });
    this.twins.set(account.id, row);
    this.live.delete(account.id);
    await this.store.accounts.setStatus(
      account.id,
      account.status,
      `${SHADOW_REASON_PREFIX} copies go to simulated twin ${sim.login}; nothing reaches the broker`,
    );
    return this.status(account);
  }

  async disable(account: Account): Promise<ShadowStatus> {
    const row = this.twins.get(account.id);
    if (row?.enabled) {
      this.twins.set(account.id, await this.repo.upsert({ ...row, enabled: false }));
      const a = this.live.get(account.id);
      this.live.delete(account.id);
      await (await a?.catch(() => null))?.close();
      const current = await this.store.accounts.byId(account.id);
      if (current?.statusReason?.startsWith(SHADOW_REASON_PREFIX))
        await this.store.accounts.setStatus(account.id, current.status, null);
    }
    return this.status(account);
  }

  async status(account: Account): Promise<ShadowStatus> {
    const row = this.twins.get(account.id) ?? null;
    let balance: string | null = null;
    let equity: string | null = null;
    if (row?.enabled) {
      const info = await (await this.twinAdapter(account.id, row)).accountInfo().catch(() => null);
      balance = info?.balance.toString() ?? null;
      equity = info?.equity.toString() ?? null;
    }
    return {
      accountId: account.id,
      enabled: row?.enabled ?? false,
      twinAccountId: row?.simAccountId ?? null,
      twinAccountNumber: row ? (this.broker.account(row.simAccountId)?.login ?? null) : null,
      startBalance: row?.startBalance ?? null,
      balance,
      equity,
    };
  }

  private twinAdapter(accountId: string, row: ShadowTwinRow): Promise<BrokerAdapter> {
    let a = this.live.get(accountId);
    if (!a) {
      a = (async () => {
        // An in-memory simulator forgets its accounts on restart: the twin comes back with its start balance.
        let simId = row.simAccountId;
        if (!this.broker.account(simId)) {
          simId = this.broker.createAccount({ balance: row.startBalance, meta: { shadowOf: accountId } }).id;
          this.twins.set(accountId, await this.repo.upsert({ ...row, simAccountId: simId }));
        }
        return this.simFactory.create({
          id: accountId,
          brokerAccountId: simId,
          environment: 'shadow',
          credentials: null,
        });
      })();
      a.catch(() => this.live.delete(accountId));
      this.live.set(accountId, a);
    }
    return a;
  }
}
