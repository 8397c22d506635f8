import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { AuthService } from '../auth/auth-service.js';
import { dataFile, type Config } from '../config/config.js';
import { withDefaults, type CopyRule } from '../domain/copy-rule.js';
import { Decimal } from '../domain/decimal.js';
import type { SimBroker } from '../simulator/broker.js';
import type { Store } from '../store/store.js';
import type { CredentialBox } from '../auth/credential-box.js';
import type { PlatformEndpoints } from '../platforms/endpoints.js';
import { discoverTradeLockerAccounts } from '../platforms/tradelocker/connect.js';

export interface DemoCredentials {
  baseUrl: string;
  v1BaseUrl: string;
  email: string;
  password: string;
  accessToken: string;
  apiKey: string;
}

export const DEMO_EMAIL = 'demo@copytrade.local';

const SLAVES: Array<{ name: string; balance: string; rule: Partial<CopyRule> }> = [
  { name: 'Demo Slave 1 (x1)', balance: '10000', rule: { sizing: { mode: 'multiplier', multiplier: '1' } } },
  { name: 'Demo Slave 2 (x0.5)', balance: '5000', rule: { sizing: { mode: 'multiplier', multiplier: '0.5' } } },
  { name: 'Demo Slave 3 (fixed 0.03)', balance: '3000', rule: { sizing: { mode: 'fixed', volume: '0.03' } } },
  { name: 'Demo Slave 4 (balance ratio, reverse)', balance: '20000', rule: { sizing: { mode: 'balance_ratio' }, reverse: true } },
];

/**
 * Demo mode: a demo user with a copier group of one Master, four Slaves on the simulated broker and two
 * platform B Slaves served by the simulator's TradeLocker front end. Runs once
 * per data dir; a restart keeps everything and only refreshes the access token if it has expired, so
 * demo-credentials.json always holds working credentials.
 */
type SeedDeps = { store: Store; auth: AuthService; broker: SimBroker; cfg: Config; baseUrl: string; v1BaseUrl: string; box: CredentialBox; endpoints: PlatformEndpoints };

export async function seedDemo(o: SeedDeps): Promise<DemoCredentials> {
  const file = dataFile(o.cfg, 'demo-credentials.json');
  const previous = file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials) : null;
  let user = await o.store.users.byEmail(DEMO_EMAIL);
  let creds: DemoCredentials;

  if (user && previous) {
    const tokenOk = await o.auth.authenticateToken(previous.accessToken);
    const keyOk = await o.auth.authenticateApiKey(previous.apiKey);
    creds = {
      ...previous,
      baseUrl: o.baseUrl,
      v1BaseUrl: o.v1BaseUrl,
      accessToken: tokenOk ? previous.accessToken : (await o.auth.issueToken(user.id)).accessToken,
      apiKey: keyOk ? previous.apiKey : (await o.auth.createApiKey(user.id, 'demo')).apiKey,
    };
  } else {
    const password = previous?.password ?? randomBytes(9).toString('base64url');
    if (!user) user = await o.store.users.byId((await o.auth.createUser(DEMO_EMAIL, password)).id);
    creds = {
      baseUrl: o.baseUrl,
      v1BaseUrl: o.v1BaseUrl,
      email: DEMO_EMAIL,
      password,
      accessToken: (await o.auth.issueToken(user!.id)).accessToken,
      apiKey: (await o.auth.createApiKey(user!.id, 'demo')).apiKey,
    };
    if ((await o.store.accounts.list(user!.id)).length === 0) await seedAccounts(o, user!.id);
  }
  if (file) writeFileSync(file, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  return creds;
}

async function seedAccounts(o: SeedDeps, userId: string): Promise<void> {
  const { store, broker } = o;
  const group = await store.accounts.createGroup(userId, 'Demo group');
  const sim = (name: string, balance: string) => {
    const a = broker.createAccount({ balance, currency: 'USD', hedging: true, leverage: 100 });
    return { a, name, balance: new Decimal(balance) };
  };
  const m = sim('Demo Master', '10000');
  await store.accounts.create({ userId, platform: 'sim', role: 'master', name: m.name, groupId: group.id, brokerAccountId: m.a.id, brokerAccountNumber: m.a.login, brokerName: 'copytrade simulator', environment: 'demo', currency: 'USD', balance: m.balance, equity: m.balance });
  for (const s of SLAVES) {
    const x = sim(s.name, s.balance);
    const acc = await store.accounts.create({ userId, platform: 'sim', role: 'slave', name: s.name, groupId: group.id, brokerAccountId: x.a.id, brokerAccountNumber: x.a.login, brokerName: 'copytrade simulator', environment: 'demo', currency: 'USD', balance: x.balance, equity: x.balance });
    await store.accounts.setRule(acc.id, withDefaults(s.rule));
  }
  await seedPlatformB(o, userId, group.id);
}

/**
 * Platform B Slaves reached through the TradeLocker protocol: the simulator holds a broker login with two
 * accounts, and the demo connects them the way the connection flow does (sign in, list, pick).
 */
async function seedPlatformB(o: SeedDeps, userId: string, groupId: string): Promise<void> {
  const login = { email: 'trader@broker-b.example', password: randomBytes(9).toString('base64url'), server: 'SIMB-Demo' };
  for (const balance of ['8000', '15000']) o.broker.createAccount({ balance, currency: 'USD', hedging: true, leverage: 100, meta: { ...login, environment: 'demo' } });
  const found = await discoverTradeLockerAccounts({ baseUrl: o.endpoints.platformb.baseUrl('demo'), ...login });
  for (const [i, a] of found.entries()) {
    const acc = await o.store.accounts.create({
      userId, platform: 'platformb', role: 'slave', groupId, name: `Demo B Slave ${i + 1} (x${i + 1})`, brokerAccountId: a.id, brokerAccountNumber: a.accountNumber,
      brokerName: login.server, environment: 'demo', currency: a.currency, balance: a.balance, equity: a.balance,
      credentialsEnc: o.box.seal({ ...login, accNum: a.accNum, accountId: a.id }),
    });
    await o.store.accounts.setRule(acc.id, withDefaults({ sizing: { mode: 'multiplier', multiplier: String(i + 1) } }));
  }
}
