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
import { listAccountsForToken } from '../platforms/ctrader/oauth.js';
import { provisionMtAccount } from '../platforms/metatrader/connect.js';
import { brokerIdentity } from '../domain/broker-identity.js';
import type { SimulatedBrokers } from './simulated-brokers.js';
import type { Role } from '../domain/types.js';

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
type SeedDeps = { store: Store; auth: AuthService; broker: SimBroker; cfg: Config; baseUrl: string; v1BaseUrl: string; box: CredentialBox; endpoints: PlatformEndpoints; simulated: SimulatedBrokers };

export async function seedDemo(o: SeedDeps): Promise<DemoCredentials> {
  const file = dataFile(o.cfg, 'demo-credentials.json');
  const previous = file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials) : null;
  let user = await o.store.users.byEmail(DEMO_EMAIL);
  let creds: DemoCredentials;

  if (user && previous) {
    await reattachSimulatedUpstreams(o, user.id);
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
  await seedPlatformC(o, userId, group.id, 'slave', '6000');
  await seedPlatformA(o, userId, group.id, 'slave', '7000');

  // A second group led by a platform A (MetaTrader) Master, copying to a simulator and a platform C Slave.
  const crossGroup = await store.accounts.createGroup(userId, 'MetaTrader master group');
  await seedPlatformA(o, userId, crossGroup.id, 'master', '25000');
  const s = sim('Demo Slave (A group)', '5000');
  const acc = await store.accounts.create({ userId, platform: 'sim', role: 'slave', name: s.name, groupId: crossGroup.id, brokerAccountId: s.a.id, brokerAccountNumber: s.a.login, brokerName: 'copytrade simulator', environment: 'demo', currency: 'USD', balance: s.balance, equity: s.balance });
  await store.accounts.setRule(acc.id, withDefaults({ sizing: { mode: 'balance_ratio' } }));
  await seedPlatformC(o, userId, crossGroup.id, 'slave', '4000');
}

/**
 * The simulated upstreams keep OAuth tokens and MetaApi provisioning in memory, so after a restart the
 * demo's platform C accounts get fresh tokens and its platform A accounts are provisioned again (the
 * simulated accounts themselves, with their positions, persist in simulator.json).
 */
async function reattachSimulatedUpstreams(o: SeedDeps, userId: string): Promise<void> {
  for (const acc of await o.store.accounts.list(userId)) {
    if (acc.platform === 'platformc') {
      const sim = o.broker.accounts().find((s) => s.meta.ctidUserId && o.simulated.ctrader.ctidTraderAccountIdOf(s.id) === acc.brokerAccountId);
      if (!sim) continue;
      const tokens = o.simulated.ctrader.issueTokenFor(sim.meta.ctidUserId!);
      const current = o.box.open((await o.store.accounts.credentialsEnc(acc.id)) ?? o.box.seal({}));
      await o.store.accounts.relink(acc.id, acc.brokerAccountId, o.box.seal({ ...current, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken }));
    } else if (acc.platform === 'platforma') {
      const sim = o.broker.accounts().find((s) => s.meta.server && s.login === acc.brokerAccountNumber);
      if (!sim) continue;
      const a = o.endpoints.platforma;
      const p = await provisionMtAccount({ baseUrl: a.baseUrl, token: a.token, server: sim.meta.server!, login: sim.login, password: sim.meta.password!, platform: 'mt5', pollMs: 100, waitMs: 30_000 });
      await o.store.accounts.relink(acc.id, p.accountId, o.box.seal({ metaApiAccountId: p.accountId, platform: p.platform, server: p.server, login: p.accountNumber, hedging: p.hedging }));
    }
  }
}

/** A platform C Slave reached over the cTrader Open API (protobuf over TLS), authorised by an OAuth token. */
async function seedPlatformC(o: SeedDeps, userId: string, groupId: string, role: Role, balance: string): Promise<void> {
  const ctidUser = 'demo-ctid-user';
  const sim = o.broker.createAccount({ balance, currency: 'USD', hedging: true, leverage: 100, meta: { ctidUserId: ctidUser, environment: 'demo', brokerName: 'SIMC' } });
  const tokens = o.simulated.ctrader.issueTokenFor(ctidUser);
  const c = o.endpoints.platformc;
  const ctid = o.simulated.ctrader.ctidTraderAccountIdOf(sim.id);
  const listed = (await listAccountsForToken({ endpoint: c.endpoint('demo'), clientId: c.clientId, clientSecret: c.clientSecret, accessToken: tokens.accessToken })).accounts.find((a) => a.ctidTraderAccountId === ctid)!;
  const acc = await o.store.accounts.create({
    userId, platform: 'platformc', role, groupId, name: `Demo C ${role === 'master' ? 'Master' : 'Slave'} #${listed.traderLogin}`, brokerAccountId: ctid,
    brokerAccountNumber: listed.traderLogin ?? sim.login, brokerName: listed.brokerName, environment: 'demo', currency: 'USD', balance: new Decimal(balance), equity: new Decimal(balance),
    credentialsEnc: o.box.seal({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, ctidTraderAccountId: ctid, traderLogin: listed.traderLogin }),
  });
  if (role === 'slave') await o.store.accounts.setRule(acc.id, withDefaults({ sizing: { mode: 'multiplier', multiplier: '1' } }));
}

/** A platform A (MetaTrader 5) account provisioned through the MetaApi-style upstream, as the connection flow does. */
async function seedPlatformA(o: SeedDeps, userId: string, groupId: string, role: Role, balance: string): Promise<void> {
  const password = randomBytes(9).toString('base64url');
  const sim = o.broker.createAccount({ balance, currency: 'USD', hedging: true, leverage: 100, meta: { server: 'SimA-Demo', password, platform: 'mt5', broker: 'SimA Markets' } });
  const a = o.endpoints.platforma;
  const p = await provisionMtAccount({ baseUrl: a.baseUrl, token: a.token, server: 'SimA-Demo', login: sim.login, password, platform: 'mt5', pollMs: 100, waitMs: 30_000 });
  const acc = await o.store.accounts.create({
    userId, platform: 'platforma', role, groupId, name: `Demo A ${role === 'master' ? 'Master' : 'Slave'} (MT5 ${p.accountNumber})`, brokerAccountId: p.accountId,
    brokerAccountNumber: p.accountNumber, brokerName: p.broker, environment: 'demo', currency: p.currency, balance: new Decimal(balance), equity: new Decimal(balance),
    brokerIdentity: brokerIdentity({ platform: 'platforma', server: 'SimA-Demo', accountId: p.accountNumber }),
    credentialsEnc: o.box.seal({ metaApiAccountId: p.accountId, platform: p.platform, server: p.server, login: p.accountNumber, hedging: p.hedging }),
  });
  if (role === 'slave') await o.store.accounts.setRule(acc.id, withDefaults({ sizing: { mode: 'multiplier', multiplier: '0.5' } }));
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
