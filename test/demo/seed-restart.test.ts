import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthService } from '../../src/auth/auth-service.js';
import { CredentialBox } from '../../src/auth/credential-box.js';
import { loadConfig } from '../../src/config/config.js';
import { type DemoBrokers, inProcessBrokers } from '../../src/demo/demo-brokers.js';
import { seedDemo } from '../../src/demo/seed.js';
import { type SimulatedBrokers, startSimulatedBrokers } from '../../src/demo/simulated-brokers.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { Store } from '../../src/store/store.js';

/**
 * Issue 14: `npm start` on a seeded data dir serves within 5 s. The guard is on work, not on the clock: a restart
 * against a simulator that kept its upstream state makes no broker call and only a few store calls.
 */
const dir = mkdtempSync(join(tmpdir(), 'ct-seed-restart-'));
let store: Store;
let simulated: SimulatedBrokers;
const broker = new SimBroker();
const box = new CredentialBox(randomBytes(32));
const cfg = loadConfig({ dataDir: dir, port: '0', demo: true }, { ...process.env, DATABASE_URL: '' });

/** Every call on a repository of the store (a call is one statement or a few), by `repo.method`. */
const storeCalls: string[] = [];
function counted(s: Store): Store {
  return new Proxy(s, {
    get(target, prop, receiver) {
      const repo = Reflect.get(target, prop, receiver) as unknown;
      if (typeof prop !== 'string' || prop === 'database' || typeof repo !== 'object' || repo === null) return repo;
      return new Proxy(repo, {
        get(r, m, rr) {
          const v = Reflect.get(r, m, rr) as unknown;
          if (typeof v !== 'function') return v;
          return (...args: unknown[]) => {
            storeCalls.push(`${prop}.${String(m)}`);
            return (v as (...a: unknown[]) => unknown).apply(r, args);
          };
        },
      });
    },
  });
}

/** The in-process brokers as a `copytrade simulator` process that keeps its upstream state `stateId`. */
const brokerCalls: string[] = [];
function brokers(stateId: string | null): DemoBrokers {
  const inner = inProcessBrokers(broker, simulated);
  const count =
    <A extends unknown[], R>(name: string, f: (...a: A) => Promise<R>) =>
    (...a: A) => {
      brokerCalls.push(name);
      return f(...a);
    };
  return {
    ...inner,
    stateId,
    accounts: count('accounts', inner.accounts),
    createAccount: count('createAccount', inner.createAccount),
    issueCTraderToken: count('issueCTraderToken', inner.issueCTraderToken),
  };
}

async function seed(stateId: string | null) {
  storeCalls.length = 0;
  brokerCalls.length = 0;
  const s = counted(store);
  const auth = new AuthService(s, { accessTokenTtlSec: 3600, apiKeyOverlapSec: 0 });
  return seedDemo({ store: s, auth, cfg, baseUrl: 'http://a', v1BaseUrl: 'http://a', box, brokers: brokers(stateId) });
}

beforeAll(async () => {
  store = await Store.open({ dataDir: ':memory:' });
  simulated = await startSimulatedBrokers(broker, '127.0.0.1');
});
afterAll(async () => {
  await simulated?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('demo seeding on a seeded data dir', () => {
  it('first start seeds, and records the simulator state the accounts are linked to', {
    timeout: 120_000,
  }, async () => {
    const creds = await seed('state-1');
    expect(creds.apiKey).toMatch(/^ctk_/);
    expect(brokerCalls.filter((c) => c === 'createAccount').length).toBeGreaterThan(10);
    expect(JSON.parse(readFileSync(join(dir, 'demo-upstreams.json'), 'utf8'))).toEqual({ simulatorState: 'state-1' });
  });

  it('a restart against the same simulator state: no broker call, no account touched, a few store calls', {
    timeout: 60_000,
  }, async () => {
    const before = JSON.parse(readFileSync(join(dir, 'demo-credentials.json'), 'utf8'));
    const creds = await seed('state-1');
    expect(brokerCalls).toEqual([]);
    // The user, then the demo token and key checked (today: byEmail, liveAccessToken, liveApiKey, touchApiKey).
    expect(storeCalls.filter((c) => c.startsWith('accounts.'))).toEqual([]);
    expect(storeCalls.length).toBeLessThanOrEqual(4);
    expect(creds).toEqual(before);
  });

  it('a simulator that lost its upstream state (wiped, or in-process): the accounts are linked again', {
    timeout: 120_000,
  }, async () => {
    const creds = await seed('state-2');
    // One listing of the simulated accounts, one token per platform C account: never one lookup per pair.
    expect(brokerCalls.filter((c) => c === 'accounts').length).toBeLessThanOrEqual(2);
    expect(brokerCalls.filter((c) => c === 'issueCTraderToken').length).toBe(2);
    expect(storeCalls.filter((c) => c === 'accounts.relink').length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(readFileSync(join(dir, 'demo-upstreams.json'), 'utf8'))).toEqual({ simulatorState: 'state-2' });
    expect(existsSync(join(dir, 'demo-seed.json'))).toBe(false);
    expect(creds.apiKey).toMatch(/^ctk_/);
    // In-process brokers keep nothing: every start links again and records no state.
    await seed(null);
    expect(brokerCalls).toContain('issueCTraderToken');
  });
});
