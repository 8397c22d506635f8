import { afterEach, describe, expect, it } from 'vitest';
import type { BrokerAdapter } from '../adapter.js';
import { createCTraderAdapterFactory, type CTraderAdapterFactory, type CTraderFactoryOptions } from './factory.js';

/**
 * Placement only: adapters connect on first use, so nothing here opens a socket (the endpoint is never dialled).
 * The wire side (fan-out, CONNECTIONS_LIMIT_EXCEEDED) is test/platforms/ctrader-pool.test.ts.
 */

const factories: CTraderAdapterFactory[] = [];
afterEach(async () => {
  for (const f of factories.splice(0)) await f.closeAll();
});

function factory(opts: Partial<CTraderFactoryOptions> = {}): CTraderAdapterFactory {
  const f = createCTraderAdapterFactory({
    resolveEndpoint: (env) => ({ host: '127.0.0.1', port: env === 'live' ? 2 : 1 }),
    clientId: 'c',
    clientSecret: 's',
    oauthBaseUrl: 'http://127.0.0.1:3',
    ...opts,
  });
  factories.push(f);
  return f;
}

const account = (i: number, environment = 'demo') => ({
  id: `acc_${i}`,
  brokerAccountId: String(1000 + i),
  environment,
  credentials: { accessToken: 'a', refreshToken: 'r', ctidTraderAccountId: String(1000 + i) },
});

/** Accounts per connection, by key. */
const spread = (f: CTraderAdapterFactory) =>
  Object.fromEntries([...f.connections()].map(([k, c]) => [k, c.accountCount()]));

describe('the cTrader connection pool', () => {
  it('fills a connection to the threshold before opening the next, then places on the fewest', async () => {
    const f = factory({ accountsPerConnection: 2, maxConnectionsPerEndpoint: 3 });
    for (let i = 0; i < 2; i++) await f.create(account(i));
    expect(spread(f)).toEqual({ '127.0.0.1:1#0': 2 });
    await f.create(account(2));
    expect(spread(f)).toEqual({ '127.0.0.1:1#0': 2, '127.0.0.1:1#1': 1 });
    await f.create(account(3));
    expect(spread(f)).toEqual({ '127.0.0.1:1#0': 2, '127.0.0.1:1#1': 2 });
    for (let i = 4; i < 6; i++) await f.create(account(i));
    expect(spread(f)).toEqual({ '127.0.0.1:1#0': 2, '127.0.0.1:1#1': 2, '127.0.0.1:1#2': 2 });
    // At the cap: past the threshold, still the fewest.
    for (let i = 6; i < 9; i++) await f.create(account(i));
    expect(spread(f)).toEqual({ '127.0.0.1:1#0': 3, '127.0.0.1:1#1': 3, '127.0.0.1:1#2': 3 });
  });

  it('51 accounts with the defaults (the soak: 50 Slaves and their Master): 13, 13, 13 and 12 on four connections', async () => {
    const f = factory();
    for (let i = 0; i < 51; i++) await f.create(account(i));
    expect(Object.values(spread(f))).toEqual([13, 13, 13, 12]);
  });

  it('a new account goes to the emptiest connection, not to a new one, below the threshold', async () => {
    const f = factory({ accountsPerConnection: 2 });
    const adapters: BrokerAdapter[] = [];
    for (let i = 0; i < 4; i++) adapters.push(await f.create(account(i)));
    await adapters[0]!.close();
    await f.create(account(9));
    expect(spread(f)).toEqual({ '127.0.0.1:1#0': 2, '127.0.0.1:1#1': 2 });
  });

  it('pools per endpoint, keeps one account on one connection, and closes a connection left empty', async () => {
    const f = factory({ accountsPerConnection: 1 });
    const a = await f.create(account(0));
    const again = await f.create(account(0));
    const live = await f.create(account(1, 'live'));
    expect(spread(f)).toEqual({ '127.0.0.1:1#0': 1, '127.0.0.1:2#0': 1 });
    const b = await f.create(account(2));
    expect(spread(f)).toEqual({ '127.0.0.1:1#0': 1, '127.0.0.1:2#0': 1, '127.0.0.1:1#1': 1 });
    await a.close();
    expect(f.connections().has('127.0.0.1:1#0')).toBe(true);
    await again.close();
    expect(spread(f)).toEqual({ '127.0.0.1:2#0': 1, '127.0.0.1:1#1': 1 });
    await live.close();
    await b.close();
    expect(f.connections().size).toBe(0);
  });
});
