import type { AuthService } from '../auth/auth-service.js';
import type { AdapterRegistry } from '../engine/adapter-registry.js';
import type { OrderService } from '../engine/order-service.js';
import type { PanicCloseService } from '../engine/panic-close.js';
import type { Store } from '../store/store.js';
import type { Account } from '../domain/account.js';
import { notFound } from '../domain/errors.js';
import type { Platform } from '../domain/types.js';

/** What the HTTP layer needs from the rest of the service (built in main.ts). */
export interface ApiDeps {
  store: Store;
  auth: AuthService;
  adapters: AdapterRegistry;
  orders: OrderService;
  panic: PanicCloseService;
  /** Per-user limit of account-connection requests. */
  connectLimit: { max: number; windowMs: number };
}

/** An owned account, optionally of one platform; anything else is the same 404. */
export async function ownedAccount(deps: ApiDeps, userId: string, id: string, platform?: Platform): Promise<Account> {
  const a = await deps.store.accounts.owned(userId, id);
  if (!a || (platform && a.platform !== platform)) throw notFound('account');
  return a;
}
