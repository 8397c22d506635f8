import { dec } from '../../src/domain/decimal.js';
import { initialHealth, type Account } from '../../src/domain/account.js';

/** A connected simulator Slave with 10,000 USD, for pure planner tests; `o` overrides any field. */
export const testAccount = (id: string, o: Partial<Account> = {}): Account => ({
  id,
  userId: 'u',
  platform: 'sim',
  role: 'slave',
  status: 'connected',
  statusReason: null,
  name: id,
  groupId: 'g',
  brokerAccountId: id,
  brokerAccountNumber: id,
  brokerName: null,
  environment: null,
  brokerIdentity: `sim:${id}`,
  currency: 'USD',
  health: initialHealth(),
  balance: dec(10_000),
  equity: dec(10_000),
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...o,
});
