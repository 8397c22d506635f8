import type { SimAccount, SimBrokerApi } from '../contract.js';

/**
 * Who owns which simulated account on the TradeLocker side. Ownership lives in `account.meta` (email,
 * password, server, environment) so that every protocol front end shares one set of accounts.
 */

export interface TlAccount {
  sim: SimAccount;
  /** Path `accountId`, the number the TradeLocker UI shows after `#`. */
  accountId: number;
  /** Header `accNum`: the account's ordinal within its user (1, 2, ...). */
  accNum: number;
  userKey: string;
}

export const userKeyOf = (email: string, server: string) => `${email.trim().toLowerCase()}\n${server.trim()}`;

export class TlDirectory {
  private readonly assigned = new Map<string, number>();
  private nextId = 700_001;

  constructor(
    private readonly broker: SimBrokerApi,
    private readonly environment: string | undefined,
  ) {}

  /** Accounts of one user in creation order, so accNum stays stable while accounts are only added. */
  accountsOf(userKey: string): TlAccount[] {
    const out: TlAccount[] = [];
    for (const sim of this.broker.accounts()) {
      const m = sim.meta ?? {};
      if (!m.email || !m.server) continue;
      if (this.environment && m.environment && m.environment !== this.environment) continue;
      if (userKeyOf(m.email, m.server) !== userKey) continue;
      out.push({ sim, accountId: this.accountIdOf(sim), accNum: out.length + 1, userKey });
    }
    return out;
  }

  checkPassword(userKey: string, password: string): boolean {
    const first = this.accountsOf(userKey)[0];
    return first !== undefined && first.sim.meta.password === password;
  }

  byAccNum(userKey: string, accNum: number): TlAccount | null {
    return this.accountsOf(userKey).find((a) => a.accNum === accNum) ?? null;
  }

  /** Numeric logins are the account number users see, so they double as accountId; others get a stable counter. */
  private accountIdOf(sim: SimAccount): number {
    if (/^\d{1,15}$/.test(sim.login) && Number(sim.login) > 0) return Number(sim.login);
    let id = this.assigned.get(sim.id);
    if (id === undefined) {
      id = this.nextId++;
      this.assigned.set(sim.id, id);
    }
    return id;
  }
}
