import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { BrokerAdapter, BrokerEvent } from '../../src/platforms/adapter.js';
import type { MetaTraderAdapter } from '../../src/platforms/metatrader/adapter.js';
import { provisionMtAccount } from '../../src/platforms/metatrader/connect.js';
import { createMetaTraderAdapterFactory } from '../../src/platforms/metatrader/factory.js';
import type { MtStreamState } from '../../src/platforms/metatrader/stream-watcher.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { type MetaApiSimServer, startMetaApiSimServer } from '../../src/simulator/metaapi/server.js';

/**
 * Platform A's topology end to end: accounts in two regions at once, each reached on its own region's client-API
 * and streaming hosts as derived from the provisioning host's domain lookup (the simulator's host map stands in
 * for DNS), and a Master whose stream is refused still copied, through REST polling, with the fallback reported.
 */
describe('platform A: accounts in two regions, and the polling fallback', () => {
  let broker: SimBroker;
  let sim: MetaApiSimServer;
  const sims: Record<string, string> = {};
  const metaIds: Record<string, string> = {};
  /** host:port and path of every HTTP request the adapters make. */
  const wire: { origin: string; path: string }[] = [];
  const states: { accountId: string; state: MtStreamState }[] = [];
  let seq = 0;
  const tag = () => `rg${Date.now().toString(36)}${(++seq).toString(36)}`;

  const factory = () =>
    createMetaTraderAdapterFactory({
      baseUrl: sim.baseUrl,
      token: sim.token,
      hosts: sim.hosts,
      timeoutMs: 2_000,
      pollIntervalMs: 250,
      fetch: (input, init) => {
        const u = new URL(String(input));
        wire.push({ origin: u.origin, path: u.pathname });
        return fetch(input, init);
      },
      onStreamState: (accountId, state) => states.push({ accountId, state }),
    });
  const open = async (region: string, withRegion: boolean): Promise<MetaTraderAdapter> => {
    const adapter = (await factory().create({
      id: `acc_${region}`,
      brokerAccountId: metaIds[region]!,
      environment: null,
      // An account stored before its region was kept: the adapter reads the region from provisioning.
      credentials: { metaApiAccountId: metaIds[region]!, platform: 'mt5', ...(withRegion ? { region } : {}) },
    })) as MetaTraderAdapter;
    await adapter.connect();
    return adapter;
  };

  beforeAll(async () => {
    broker = new SimBroker({ seed: 31 });
    broker.setPrice('EURUSD', '1.08000');
    sim = await startMetaApiSimServer(broker, { detectionMs: 5, deployMs: 5, connectMs: 5, streamStatusMs: 200 });
    for (const region of ['new-york', 'london']) {
      const meta = { server: 'Regions-MT5', password: `pw-${region}`, platform: 'mt5' as const };
      const acc = broker.createAccount({ balance: 10_000, hedging: true, meta });
      sims[region] = acc.id;
      const p = await provisionMtAccount({
        baseUrl: sim.baseUrl,
        token: sim.token,
        hosts: sim.hosts,
        server: meta.server,
        login: acc.login,
        password: meta.password,
        platform: 'mt5',
        region,
        waitMs: 3_000,
        pollMs: 5,
      });
      expect(p.region).toBe(region);
      metaIds[region] = p.accountId;
    }
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('serves a New York and a London account at once, each on its own region hosts, streaming', async () => {
    wire.length = 0;
    const ny = await open('new-york', true);
    const london = await open('london', false);
    const seen: Record<string, BrokerEvent[]> = { 'new-york': [], london: [] };
    const offs = [ny.subscribe((e) => seen['new-york']!.push(e)), london.subscribe((e) => seen.london!.push(e))];
    try {
      await expect.poll(() => ny.streaming && london.streaming, { timeout: 10_000 }).toBe(true);
      const out = await london.placeOrder({
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.1'),
        tag: tag(),
      });
      expect(out.kind).toBe('confirmed');
      const pos = broker.placeOrder(sims['new-york']!, {
        symbol: 'EURUSD',
        side: 'sell',
        type: 'market',
        volume: dec('0.2'),
        tag: tag(),
      }).position!.id;
      await expect
        .poll(() => seen['new-york']!.some((e) => e.kind === 'position_opened' && e.position?.id === pos), {
          timeout: 5_000,
        })
        .toBe(true);
      await expect.poll(() => seen.london!.some((e) => e.kind === 'position_opened'), { timeout: 5_000 }).toBe(true);
      expect(seen.london!.some((e) => e.position?.id === pos)).toBe(false);
    } finally {
      for (const off of offs) off();
      await ny.close();
      await london.close();
    }
    const origins = (re: RegExp) => new Set(wire.filter((w) => re.test(w.path)).map((w) => w.origin));
    const client = /\/users\/current\/accounts\/[^/]+\/(account-information|trade|history-deals|positions|orders)/;
    expect(origins(new RegExp(`${metaIds['new-york']}/`))).toEqual(new Set([sim.clientApiUrls['new-york']]));
    const londonClient = wire.filter((w) => w.path.includes(`${metaIds.london}/`) && client.test(w.path));
    expect(new Set(londonClient.map((w) => w.origin))).toEqual(new Set([sim.clientApiUrls.london]));
    // The provisioning host saw the domain lookup and London's account read (its region), nothing of the client API.
    const onProvisioning = wire.filter((w) => w.origin === sim.baseUrl).map((w) => w.path);
    expect(new Set(onProvisioning)).toEqual(
      new Set(['/users/current/servers/mt-client-api', `/users/current/accounts/${metaIds.london}`]),
    );
  });

  it('a Master whose stream is refused is copied through REST polls, and the fallback is reported', async () => {
    states.length = 0;
    // Refused before socket.io, as a server that does not speak the client's Engine.IO would refuse it.
    sim.stream.refuse(true, 'http');
    const master = await open('new-york', true);
    const slave: BrokerAdapter = await open('london', true);
    const copies: Promise<unknown>[] = [];
    // The copier's part, reduced to one rule: a position opened on the Master opens the same on the Slave.
    const off = master.subscribe((e) => {
      if (e.kind === 'position_opened' && e.position)
        copies.push(
          slave.placeOrder({
            symbol: e.position.symbol,
            side: e.position.side,
            type: 'market',
            volume: e.position.volume,
            tag: tag(),
          }),
        );
    });
    try {
      await expect
        .poll(() => states.find((s) => s.accountId === metaIds['new-york'])?.state, { timeout: 5_000 })
        .toMatchObject({ mode: 'polling', reason: expect.any(String) });
      expect(master.streamDegradedReason).not.toBeNull();
      // Two position reads after the report: the polls' baseline is taken, so the next change is reported.
      const mark = wire.length;
      await expect
        .poll(() => wire.slice(mark).filter((w) => w.path.endsWith(`${metaIds['new-york']}/positions`)).length, {
          timeout: 5_000,
        })
        .toBeGreaterThanOrEqual(2);
      broker.placeOrder(sims['new-york']!, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.3'),
        tag: tag(),
      });
      await expect.poll(() => copies.length, { timeout: 5_000 }).toBe(1);
      expect(await copies[0]).toMatchObject({ kind: 'confirmed' });
      expect(broker.positions(sims.london!).some((p) => p.volume.eq(dec('0.3')) && p.side === 'buy')).toBe(true);
      expect(master.streaming).toBe(false);

      // The stream back: the adapter reports it and leaves polling.
      sim.stream.refuse(false);
      await expect.poll(() => master.streaming, { timeout: 10_000 }).toBe(true);
      expect(states.filter((s) => s.accountId === metaIds['new-york']).map((s) => s.state.mode)).toEqual([
        'polling',
        'streaming',
      ]);
      expect(master.streamDegradedReason).toBeNull();
    } finally {
      off();
      await master.close();
      await slave.close();
    }
  });
});
