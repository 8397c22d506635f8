import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { AuthService } from '../auth/auth-service.js';
import { dataFile, type Config } from '../config/config.js';
import { withDefaults, type CopyRule } from '../domain/copy-rule.js';
import { Decimal } from '../domain/decimal.js';
import type { Store } from '../store/store.js';
import type { CredentialBox } from '../auth/credential-box.js';
import { discoverTradeLockerAccounts } from '../platforms/tradelocker/connect.js';
import { discoverDxAccounts } from '../platforms/dxtrade/connect.js';
import { listAccountsForToken } from '../platforms/ctrader/oauth.js';
import { provisionMtAccount } from '../platforms/metatrader/connect.js';
import type { DemoBrokers, DemoSimAccount } from './demo-brokers.js';
import type { Account } from '../domain/account.js';
import { brokerIdentity } from '../domain/broker-identity.js';
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
  {
    name: 'Demo Slave 4 (balance ratio, reverse)',
    balance: '20000',
    rule: { sizing: { mode: 'balance_ratio' }, reverse: true },
  },
];

/** Test hook: called after each seeding step, so a test can interrupt the seeding where a kill could. */
export interface SeedHooks {
  afterStep?(step: string): void | Promise<void>;
}

type SeedDeps = {
  store: Store;
  auth: AuthService;
  cfg: Config;
  baseUrl: string;
  v1BaseUrl: string;
  box: CredentialBox;
  brokers: DemoBrokers;
  hooks?: SeedHooks;
};

type Platform = 'sim' | 'platforma' | 'platformb' | 'platformc' | 'platformd';
type GroupName = 'Demo group' | 'MetaTrader master group';

/** One demo account; `key` names it at the simulator (meta.demoKey) so a re-run finds it instead of adding one. */
interface Spec {
  key: string;
  group: GroupName;
  platform: Platform;
  role: Role;
  balance: string;
  name?: string;
  rule?: Partial<CopyRule>;
}

const SPECS: Spec[] = [
  { key: 'master', group: 'Demo group', platform: 'sim', role: 'master', name: 'Demo Master', balance: '10000' },
  ...SLAVES.map(
    (s, i): Spec => ({
      key: `slave-${i + 1}`,
      group: 'Demo group',
      platform: 'sim',
      role: 'slave',
      name: s.name,
      balance: s.balance,
      rule: s.rule,
    }),
  ),
  {
    key: 'b-1',
    group: 'Demo group',
    platform: 'platformb',
    role: 'slave',
    name: 'Demo B Slave 1 (x1)',
    balance: '8000',
    rule: { sizing: { mode: 'multiplier', multiplier: '1' } },
  },
  {
    key: 'b-2',
    group: 'Demo group',
    platform: 'platformb',
    role: 'slave',
    name: 'Demo B Slave 2 (x2)',
    balance: '15000',
    rule: { sizing: { mode: 'multiplier', multiplier: '2' } },
  },
  {
    key: 'd-slave',
    group: 'Demo group',
    platform: 'platformd',
    role: 'slave',
    name: 'Demo DXtrade Slave',
    balance: '7500',
    rule: { sizing: { mode: 'multiplier', multiplier: '1' } },
  },
  {
    key: 'c-slave',
    group: 'Demo group',
    platform: 'platformc',
    role: 'slave',
    balance: '6000',
    rule: { sizing: { mode: 'multiplier', multiplier: '1' } },
  },
  {
    key: 'a-slave',
    group: 'Demo group',
    platform: 'platforma',
    role: 'slave',
    balance: '7000',
    rule: { sizing: { mode: 'multiplier', multiplier: '0.5' } },
  },
  // A second group led by a platform A (MetaTrader) Master, copying to a simulator and a platform C Slave.
  { key: 'a-master', group: 'MetaTrader master group', platform: 'platforma', role: 'master', balance: '25000' },
  {
    key: 'a-group-slave',
    group: 'MetaTrader master group',
    platform: 'sim',
    role: 'slave',
    name: 'Demo Slave (A group)',
    balance: '5000',
    rule: { sizing: { mode: 'balance_ratio' } },
  },
  {
    key: 'a-group-c',
    group: 'MetaTrader master group',
    platform: 'platformc',
    role: 'slave',
    balance: '4000',
    rule: { sizing: { mode: 'multiplier', multiplier: '1' } },
  },
];

const CTID_USER = 'demo-ctid-user';
const B_LOGIN = { email: 'trader@broker-b.example', server: 'SIMB-Demo' };
/** The server the demo's DXtrade accounts name; demo mode's endpoints answer the simulator whatever it is. */
const DX_SERVER = 'dx.broker-d.example';

/** The accounts the demo seeds: with the simulator in its own process the `sim` platform is not on its market, so
 * those accounts are served over the cTrader protocol instead (same names, roles, balances and rules). */
export function demoSpecs(hostsSimPlatform: boolean): Spec[] {
  return SPECS.map((s) => (s.platform === 'sim' && !hostsSimPlatform ? { ...s, platform: 'platformc' } : s));
}

/**
 * Demo mode: a demo user with two copier groups over the simulated brokers. Seeding is a sequence of idempotent
 * steps (each finds what a killed earlier run made, at the simulator by meta.demoKey and in the store by name),
 * and the password is on disk (demo-seed.json) before the user exists, so a start killed anywhere in its first
 * seeding completes the same demo next time. A start after a complete seeding keeps everything and only
 * refreshes credentials that stopped working, so demo-credentials.json always holds working ones.
 *
 * The restart path must cost next to nothing (`npm start` serves within seconds): when the simulator still keeps
 * the upstream state the accounts were linked to (its stateId, recorded in demo-upstreams.json once linked), it
 * makes no broker call at all and two store reads (the user; the token and key checks). Otherwise (an in-process
 * simulator, or a simulator whose state was wiped) it re-links the accounts, each at once.
 */
export async function seedDemo(o: SeedDeps): Promise<DemoCredentials> {
  const file = dataFile(o.cfg, 'demo-credentials.json');
  const pendingFile = dataFile(o.cfg, 'demo-seed.json');
  const linkedFile = dataFile(o.cfg, 'demo-upstreams.json');
  const previous = readJson<DemoCredentials>(file);
  const pending = readJson<{ password: string }>(pendingFile);
  const linked = readJson<{ simulatorState: string }>(linkedFile);
  const stateId = o.brokers.stateId;
  const user = await o.store.users.byEmail(DEMO_EMAIL);
  // The simulator keeps what the accounts were linked to, spare accounts included: nothing to do there.
  const stillLinked = stateId !== null && linked?.simulatorState === stateId;

  const credentials = async (): Promise<DemoCredentials> => {
    if (user && previous && !pending) {
      if (!stillLinked) await reattachSimulatedUpstreams(o, user.id);
      const [tokenOk, keyOk] = await Promise.all([
        o.auth.authenticateToken(previous.accessToken),
        o.auth.authenticateApiKey(previous.apiKey),
      ]);
      return {
        ...previous,
        baseUrl: o.baseUrl,
        v1BaseUrl: o.v1BaseUrl,
        accessToken: tokenOk ? previous.accessToken : (await o.auth.issueToken(user.id)).accessToken,
        apiKey: keyOk ? previous.apiKey : (await o.auth.createApiKey(user.id, 'demo')).apiKey,
      };
    } else {
      const password = pending?.password ?? previous?.password ?? randomBytes(9).toString('base64url');
      // Before the user: a start killed right after creating it must still know the password it was given.
      if (pendingFile && !pending) writePrivate(pendingFile, { password });
      // The password hash (scrypt) runs while the simulator makes the brokers' accounts.
      const userId = await seedAccounts(o, async () =>
        user
          ? { id: user.id, created: false }
          : { id: (await o.auth.createUser(DEMO_EMAIL, password)).id, created: true },
      );
      return {
        baseUrl: o.baseUrl,
        v1BaseUrl: o.v1BaseUrl,
        email: DEMO_EMAIL,
        password,
        accessToken: (await o.auth.issueToken(userId)).accessToken,
        apiKey: (await o.auth.createApiKey(userId, 'demo')).apiKey,
      };
    }
  };
  // The spare accounts are the simulator's alone: made while the demo's own are linked.
  const [creds] = await allSettled2(credentials(), stillLinked ? Promise.resolve() : ensureSpareAccounts(o.brokers));
  if (file && !sameJson(previous, creds)) writePrivate(file, creds);
  // Last: recorded only once every account is linked to this state and the spares exist there.
  if (linkedFile && stateId !== null && !stillLinked) writePrivate(linkedFile, { simulatorState: stateId });
  if (pendingFile) rmSync(pendingFile, { force: true });
  return creds;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

async function step(o: SeedDeps, name: string): Promise<void> {
  await o.hooks?.afterStep?.(name);
}

function readJson<T>(file: string | null): T | null {
  return file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : null;
}

function writePrivate(file: string, value: unknown): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * The slow parts run at once, not one account after another: the user's password hash beside the simulator's
 * accounts (a control-API call each), then what each account needs from its broker protocol (MetaApi provisioning
 * waits out a deployment, cTrader a TLS handshake per token), then the store's rows in one statement. Step hooks
 * fire in a fixed order once each concurrent part has settled, and a failure is raised only after every call of
 * its part has ended: nothing of an interrupted run is still writing when the next one starts. Returns the user.
 */
async function seedAccounts(o: SeedDeps, createUser: () => Promise<{ id: string; created: boolean }>): Promise<string> {
  const specs = demoSpecs(o.brokers.hostsSimPlatform);
  const sims = await o.brokers.accounts();
  // Both platform B accounts are under one broker login: its password is chosen once, before either is made.
  const bPassword =
    sims.find((s) => s.meta.email === B_LOGIN.email && s.meta.demoKey?.startsWith('b-'))?.meta.password ??
    randomBytes(9).toString('base64url');
  const missing = specs.filter((spec) => !sims.some((s) => s.meta.demoKey === spec.key));
  const [user, made] = await allSettled2(
    createUser(),
    allSettled(missing.map((spec) => o.brokers.createAccount(brokerInit(spec, bPassword)))),
  );
  const userId = user.id;
  if (user.created) await step(o, 'user');
  for (const [i, spec] of missing.entries()) {
    sims.push(made[i]!);
    await step(o, `broker:${spec.key}`);
  }
  const groups = new Map((await o.store.accounts.listGroups(userId)).map((g) => [g.name, g.id]));
  for (const spec of specs) {
    if (groups.has(spec.group)) continue;
    groups.set(spec.group, (await o.store.accounts.createGroup(userId, spec.group)).id);
    await step(o, `group:${spec.group}`);
  }
  const existing = await o.store.accounts.list(userId);
  const planned = specs.map((spec) => ({
    spec,
    groupId: groups.get(spec.group)!,
    sim: sims.find((s) => s.meta.demoKey === spec.key)!,
  }));
  const links = await allSettled(planned.map((p) => linkAccount(o, userId, p.groupId, p.spec, p.sim, existing)));
  const creates = links.flatMap((l) => ('create' in l ? [l.create] : []));
  if (creates.length > 0) await o.store.accounts.createMany(creates);
  const now = await o.store.accounts.list(userId);
  const accountOf = (l: (typeof links)[number]): Account => {
    if ('had' in l) return l.had;
    const c = l.create;
    return now.find(
      (a) => a.groupId === c.groupId && a.platform === c.platform && a.brokerAccountNumber === c.brokerAccountNumber,
    )!;
  };
  for (const [i, { spec }] of planned.entries()) if ('create' in links[i]!) await step(o, `store:${spec.key}`);
  const slaves = planned.flatMap((p, i) => (p.spec.role === 'slave' ? [{ spec: p.spec, link: links[i]! }] : []));
  await allSettled(
    slaves.map(({ spec, link }) => o.store.accounts.setRule(accountOf(link).id, withDefaults(spec.rule ?? {}))),
  );
  for (const { spec } of slaves) await step(o, `rule:${spec.key}`);
  return userId;
}

/** Two promises of different types, settled together (see allSettled). */
async function allSettled2<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [x, y] = await Promise.allSettled([a, b]);
  if (x.status === 'rejected') throw x.reason;
  if (y.status === 'rejected') throw y.reason;
  return [x.value, y.value];
}

/** Promise.all that waits for every promise before it raises the first failure. */
async function allSettled<T>(promises: Array<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

function brokerInit(
  spec: Spec,
  bPassword: string,
): { balance: string; currency: string; hedging: boolean; leverage: number; meta: Record<string, string> } {
  const base = { balance: spec.balance, currency: 'USD', hedging: true, leverage: 100 };
  const demoKey = spec.key;
  switch (spec.platform) {
    case 'sim':
      return { ...base, meta: { demoKey } };
    case 'platformc':
      return { ...base, meta: { demoKey, ctidUserId: CTID_USER, environment: 'demo', brokerName: 'SIMC' } };
    case 'platforma':
      return {
        ...base,
        meta: {
          demoKey,
          server: 'SimA-Demo',
          password: randomBytes(9).toString('base64url'),
          platform: 'mt5',
          broker: 'SimA Markets',
        },
      };
    case 'platformd':
      // One DXtrade user per account: the simulator checks a user's password on its first account.
      return {
        ...base,
        meta: {
          demoKey,
          username: `demo-${demoKey}`,
          domain: 'default',
          password: randomBytes(9).toString('base64url'),
          environment: 'demo',
        },
      };
    case 'platformb': {
      // Both platform B Slaves are accounts of one broker login, as a trader with two accounts has.
      return { ...base, meta: { demoKey, ...B_LOGIN, password: bPassword, environment: 'demo' } };
    }
  }
}

type NewAccount = Parameters<Store['accounts']['create']>[0];

/** The store's account for a seeded simulator account: found (a re-run) by platform and number, else what to create. */
async function linkAccount(
  o: SeedDeps,
  userId: string,
  groupId: string,
  spec: Spec,
  sim: DemoSimAccount,
  existing: Account[],
): Promise<{ had: Account } | { create: NewAccount }> {
  const found = (platform: Platform, number: string) =>
    existing.find((a) => a.groupId === groupId && a.platform === platform && a.brokerAccountNumber === number);
  const common = {
    userId,
    role: spec.role,
    groupId,
    environment: 'demo' as const,
    balance: new Decimal(spec.balance),
    equity: new Decimal(spec.balance),
  };
  const title = spec.role === 'master' ? 'Master' : 'Slave';
  switch (spec.platform) {
    case 'sim': {
      const had = found('sim', sim.login);
      if (had) return { had };
      return {
        create: {
          ...common,
          platform: 'sim',
          name: spec.name!,
          brokerAccountId: sim.id,
          brokerAccountNumber: sim.login,
          brokerName: 'copytrade simulator',
          currency: 'USD',
        },
      };
    }
    case 'platformc': {
      const tokens = await o.brokers.issueCTraderToken(CTID_USER);
      const c = o.brokers.endpoints.platformc;
      const ctid = sim.ctidTraderAccountId!;
      const listed = (
        await listAccountsForToken({
          endpoint: c.endpoint('demo'),
          clientId: c.clientId,
          clientSecret: c.clientSecret,
          accessToken: tokens.accessToken,
        })
      ).accounts.find((a) => a.ctidTraderAccountId === ctid)!;
      const number = listed.traderLogin ?? sim.login;
      const had = found('platformc', number);
      if (had) return { had };
      return {
        create: {
          ...common,
          platform: 'platformc',
          name: spec.name ?? `Demo C ${title} #${listed.traderLogin}`,
          brokerAccountId: ctid,
          brokerAccountNumber: number,
          brokerName: listed.brokerName,
          currency: 'USD',
          credentialsEnc: o.box.seal({
            accessToken: tokens.accessToken,
            refreshToken: tokens.refreshToken,
            ctidTraderAccountId: ctid,
            traderLogin: listed.traderLogin,
          }),
        },
      };
    }
    case 'platforma': {
      const had = found('platforma', sim.login);
      if (had) return { had };
      const a = o.brokers.endpoints.platforma;
      const p = await provisionMtAccount({
        ...a,
        server: sim.meta.server!,
        login: sim.login,
        password: sim.meta.password!,
        platform: 'mt5',
        pollMs: 100,
        waitMs: 30_000,
      });
      return {
        create: {
          ...common,
          platform: 'platforma',
          name: `Demo A ${title} (MT5 ${p.accountNumber})`,
          brokerAccountId: p.accountId,
          brokerAccountNumber: p.accountNumber,
          brokerName: p.broker,
          currency: p.currency,
          brokerIdentity: brokerIdentity({
            platform: 'platforma',
            server: sim.meta.server!,
            accountId: p.accountNumber,
          }),
          credentialsEnc: o.box.seal({
            metaApiAccountId: p.accountId,
            platform: p.platform,
            server: p.server,
            login: p.accountNumber,
            hedging: p.hedging,
            region: p.region,
          }),
        },
      };
    }
    case 'platformd': {
      const login = { username: sim.meta.username!, domain: sim.meta.domain!, password: sim.meta.password! };
      const code = `default:${sim.login}`;
      const a = (
        await discoverDxAccounts({ baseUrl: o.brokers.endpoints.platformd.baseUrl(DX_SERVER, 'demo'), ...login })
      ).find((x) => x.account === code);
      if (!a) throw new Error(`the simulator's DXtrade front end does not list demo account ${code}`);
      const had = found('platformd', a.account);
      if (had) return { had };
      return {
        create: {
          ...common,
          platform: 'platformd',
          name: spec.name ?? `Demo DXtrade ${title} ${a.account}`,
          brokerAccountId: a.account,
          brokerAccountNumber: a.account,
          brokerName: DX_SERVER,
          currency: a.currency,
          brokerIdentity: brokerIdentity({
            platform: 'platformd',
            environment: 'demo',
            server: DX_SERVER,
            accountId: a.account,
          }),
          credentialsEnc: o.box.seal({ ...login, server: DX_SERVER, account: a.account, hedging: a.hedging }),
        },
      };
    }
    case 'platformb': {
      const login = { email: sim.meta.email!, password: sim.meta.password!, server: sim.meta.server! };
      const a = (
        await discoverTradeLockerAccounts({ baseUrl: o.brokers.endpoints.platformb.baseUrl('demo'), ...login })
      ).find((x) => x.id === sim.id || x.accountNumber === sim.login);
      if (!a) throw new Error(`the simulator's TradeLocker front end does not list demo account ${sim.id}`);
      const had = found('platformb', a.accountNumber);
      if (had) return { had };
      return {
        create: {
          ...common,
          platform: 'platformb',
          name: spec.name!,
          brokerAccountId: a.id,
          brokerAccountNumber: a.accountNumber,
          brokerName: login.server,
          currency: a.currency,
          credentialsEnc: o.box.seal({ ...login, accNum: a.accNum, accountId: a.id }),
        },
      };
    }
  }
}

/**
 * The simulated upstreams' OAuth tokens and MetaApi provisioning are gone when they run in this process (they
 * died with the last one) or when the simulator's state was wiped. Platform C accounts get fresh tokens (the old
 * ones stay valid where they still exist); platform A accounts are provisioned again only when the MetaApi account
 * is gone. One listing of the simulated accounts, then every account at once: provisioning takes about a second.
 */
async function reattachSimulatedUpstreams(o: SeedDeps, userId: string): Promise<void> {
  const sims = await o.brokers.accounts();
  const relink = async (acc: Account): Promise<void> => {
    if (acc.platform === 'platformc') {
      const sim = sims.find((s) => s.ctidTraderAccountId === acc.brokerAccountId);
      if (!sim) return;
      const tokens = await o.brokers.issueCTraderToken(sim.meta.ctidUserId!);
      const current = o.box.open((await o.store.accounts.credentialsEnc(acc.id)) ?? o.box.seal({}));
      await o.store.accounts.relink(
        acc.id,
        acc.brokerAccountId,
        o.box.seal({ ...current, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken }),
      );
    } else if (acc.platform === 'platforma') {
      const sim = sims.find((s) => s.meta.server && s.login === acc.brokerAccountNumber);
      if (!sim) return;
      const a = o.brokers.endpoints.platforma;
      if (await metaApiAccountExists(a, acc.brokerAccountId)) return;
      const p = await provisionMtAccount({
        ...a,
        server: sim.meta.server!,
        login: sim.login,
        password: sim.meta.password!,
        platform: 'mt5',
        pollMs: 100,
        waitMs: 30_000,
      });
      await o.store.accounts.relink(
        acc.id,
        p.accountId,
        o.box.seal({
          metaApiAccountId: p.accountId,
          platform: p.platform,
          server: p.server,
          login: p.accountNumber,
          hedging: p.hedging,
          region: p.region,
        }),
      );
    }
  };
  await Promise.all((await o.store.accounts.list(userId)).map(relink));
}

async function metaApiAccountExists(a: { baseUrl: string; token: string }, id: string): Promise<boolean> {
  const res = await fetch(`${a.baseUrl}/users/current/accounts/${encodeURIComponent(id)}`, {
    headers: { 'auth-token': a.token },
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return res.ok;
}

/**
 * Simulated accounts the demo leaves unconnected, so each connection wizard has something to connect: two per
 * platform (B's two under one broker login, so its "pick one of several" step shows; C's under a cTrader ID user
 * of their own, so the consent page offers only them). Found again by meta.demoKey on later starts.
 */
const SPARES: Array<{ key: string; platform: 'platforma' | 'platformb' | 'platformc' | 'platformd'; balance: string }> =
  [
    { key: 'spare-a-1', platform: 'platforma', balance: '3000' },
    { key: 'spare-a-2', platform: 'platforma', balance: '12000' },
    { key: 'spare-b-1', platform: 'platformb', balance: '4000' },
    { key: 'spare-b-2', platform: 'platformb', balance: '9000' },
    { key: 'spare-c-1', platform: 'platformc', balance: '5000' },
    { key: 'spare-c-2', platform: 'platformc', balance: '11000' },
    { key: 'spare-d-1', platform: 'platformd', balance: '6000' },
  ];
/** Demo keys of the spare accounts (each is made once at the simulator, like the seeded ones). */
export const SPARE_KEYS = SPARES.map((s) => s.key);
const SPARE_CTID_USER = 'demo-ctid-spare';
const SPARE_B_LOGIN = { email: 'spare@broker-b.example', server: 'SIMB-Demo' };

export async function ensureSpareAccounts(brokers: DemoBrokers): Promise<void> {
  const sims = await brokers.accounts();
  // One broker login for both B spares: its password is chosen once, so the spares can be made at once.
  const bPassword =
    sims.find((x) => x.meta.email === SPARE_B_LOGIN.email)?.meta.password ?? randomBytes(6).toString('base64url');
  const missing = SPARES.filter((spare) => !sims.some((x) => x.meta.demoKey === spare.key));
  await allSettled(
    missing.map((spare) => {
      const base = { balance: spare.balance, currency: 'USD', hedging: true, leverage: 100 };
      const meta: Record<string, string> =
        spare.platform === 'platforma'
          ? {
              server: 'SimA-Demo',
              password: randomBytes(6).toString('base64url'),
              platform: 'mt5',
              broker: 'SimA Markets',
            }
          : spare.platform === 'platformb'
            ? { ...SPARE_B_LOGIN, environment: 'demo', password: bPassword }
            : spare.platform === 'platformd'
              ? {
                  username: `demo-${spare.key}`,
                  domain: 'default',
                  environment: 'demo',
                  password: randomBytes(6).toString('base64url'),
                }
              : { ctidUserId: SPARE_CTID_USER, environment: 'demo', brokerName: 'SIMC' };
      return brokers.createAccount({ ...base, meta: { demoKey: spare.key, ...meta } });
    }),
  );
}

/** What the wizards show in demo mode: the logins of the spare simulated accounts (demo brokers only, never real ones). */
export interface DemoBrokerLogins {
  platforma: Array<{ platform: string; server: string; login: string; password: string; balance: string }>;
  platformb: Array<{
    environment: string;
    server: string;
    email: string;
    password: string;
    accountNumber: string;
    balance: string;
  }>;
  platformc: Array<{ ctidUser: string; environment: string; accountNumber: string; balance: string }>;
  platformd: Array<{
    environment: string;
    server: string;
    username: string;
    domain: string;
    password: string;
    account: string;
    balance: string;
  }>;
}

export async function demoBrokerLogins(brokers: DemoBrokers): Promise<DemoBrokerLogins> {
  const spares = (await brokers.accounts()).filter((x) => x.meta.demoKey?.startsWith('spare-'));
  const balance = (key: string) => SPARES.find((s) => s.key === key)?.balance ?? '';
  const out: DemoBrokerLogins = { platforma: [], platformb: [], platformc: [], platformd: [] };
  for (const x of spares.sort((a, b) => a.meta.demoKey!.localeCompare(b.meta.demoKey!))) {
    const k = x.meta.demoKey!;
    if (k.startsWith('spare-a-'))
      out.platforma.push({
        platform: x.meta.platform ?? 'mt5',
        server: x.meta.server!,
        login: x.login,
        password: x.meta.password!,
        balance: balance(k),
      });
    else if (k.startsWith('spare-b-'))
      out.platformb.push({
        environment: 'demo',
        server: x.meta.server!,
        email: x.meta.email!,
        password: x.meta.password!,
        accountNumber: x.login,
        balance: balance(k),
      });
    else if (k.startsWith('spare-d-'))
      out.platformd.push({
        environment: 'demo',
        server: DX_SERVER,
        username: x.meta.username!,
        domain: x.meta.domain!,
        password: x.meta.password!,
        account: `default:${x.login}`,
        balance: balance(k),
      });
    else if (k.startsWith('spare-c-'))
      out.platformc.push({
        ctidUser: x.meta.ctidUserId!,
        environment: 'demo',
        accountNumber: x.login,
        balance: balance(k),
      });
  }
  return out;
}

/**
 * The logins with every spare someone has connected taken out, and every spare that shares a broker login with
 * one (the two platform B spares have one TradeLocker login): the list hands out broker passwords to every
 * signed-in user, so it must only name accounts no one holds. `connected` has `<platform>:<account number>`.
 */
export function unconnectedLogins(all: DemoBrokerLogins, connected: ReadonlySet<string>): DemoBrokerLogins {
  const takenB = new Set(
    all.platformb.filter((b) => connected.has(`platformb:${b.accountNumber}`)).map((b) => `${b.server}\n${b.email}`),
  );
  return {
    platforma: all.platforma.filter((a) => !connected.has(`platforma:${a.login}`)),
    platformb: all.platformb.filter((b) => !takenB.has(`${b.server}\n${b.email}`)),
    platformc: all.platformc.filter((c) => !connected.has(`platformc:${c.accountNumber}`)),
    platformd: all.platformd.filter((d) => !connected.has(`platformd:${d.account}`)),
  };
}
