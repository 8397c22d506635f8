import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { BrokerEvent } from '../../src/platforms/adapter.js';
import { MetaTraderAdapter } from '../../src/platforms/metatrader/adapter.js';
import { MetaApiGateway } from '../../src/platforms/metatrader/gateway.js';
import { createMetaTraderAdapterFactory } from '../../src/platforms/metatrader/factory.js';
import { until } from '../helpers/cli-process.js';
import { provisionMtAccount } from '../../src/platforms/metatrader/connect.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startMetaApiSimServer } from '../../src/simulator/metaapi/server.js';
import { runAdapterConformance } from './adapter-conformance.js';

async function harness(platform: 'mt4' | 'mt5', hedging: boolean) {
  const broker = new SimBroker({ seed: 5 });
  const server = `SimMarkets-${platform.toUpperCase()}-Demo`;
  // Another login on the same server, so provisioning must pick the account by login.
  broker.createAccount({ balance: 3_000, meta: { server, password: 'other-pw', platform } });
  const acc = broker.createAccount({ balance: 10_000, hedging, meta: { server, password: 'mt-pw-1', platform } });
  const sim = await startMetaApiSimServer(broker);
  const provisioned = await provisionMtAccount({
    baseUrl: sim.baseUrl,
    token: sim.token,
    hosts: sim.hosts,
    server,
    login: acc.login,
    password: 'mt-pw-1',
    platform,
    waitMs: 5_000,
    pollMs: 10,
  });
  const factory = createMetaTraderAdapterFactory({
    baseUrl: sim.baseUrl,
    token: sim.token,
    hosts: sim.hosts,
    timeoutMs: 300,
    pollIntervalMs: 100,
  });
  const adapter = await factory.create({
    id: 'acc_test',
    brokerAccountId: provisioned.accountNumber,
    environment: null,
    credentials: {
      metaApiAccountId: provisioned.accountId,
      platform: provisioned.platform,
      server,
      login: provisioned.accountNumber,
      hedging: provisioned.hedging,
    },
  });
  await (adapter as MetaTraderAdapter).connect();
  return {
    broker,
    simAccountId: acc.id,
    adapter,
    timeoutMs: 300,
    teardown: async () => {
      await adapter.close();
      await sim.close();
    },
  };
}

runAdapterConformance('metatrader mt5 hedging (MetaApi REST over loopback)', () => harness('mt5', true));
runAdapterConformance('metatrader mt5 netting (MetaApi REST over loopback)', () => harness('mt5', false));
runAdapterConformance('metatrader mt4 (MetaApi REST over loopback)', () => harness('mt4', true));

/**
 * The streaming half of platform A: subscribe() is fed by MetaApi's socket.io stream, so a change at the broker
 * reaches the listener without a REST poll, and a dropped socket is followed by a resynchronization that reports
 * what changed meanwhile, once. The poll period is far beyond every wait here: only the stream can deliver.
 */
describe('metatrader streaming (MetaApi socket.io /ws over loopback)', () => {
  const NO_POLL_MS = 600_000;
  let broker: SimBroker;
  let sim: Awaited<ReturnType<typeof startMetaApiSimServer>>;
  let simId: string;
  let adapter: MetaTraderAdapter;
  const restReads: string[] = [];
  const seen: BrokerEvent[] = [];
  let off: () => void = () => {};

  beforeAll(async () => {
    broker = new SimBroker({ seed: 21 });
    broker.setPrice('EURUSD', '1.08000');
    const meta = { server: 'Stream-MT5', password: 'pw-stream', platform: 'mt5' as const };
    const acc = broker.createAccount({ balance: 20_000, hedging: true, meta });
    simId = acc.id;
    sim = await startMetaApiSimServer(broker, { detectionMs: 5, deployMs: 5, connectMs: 5 });
    const p = await provisionMtAccount({
      baseUrl: sim.baseUrl,
      token: sim.token,
      hosts: sim.hosts,
      server: meta.server,
      login: acc.login,
      password: meta.password,
      platform: 'mt5',
      waitMs: 3_000,
      pollMs: 5,
    });
    const counting: typeof fetch = (input, init) => {
      restReads.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    };
    adapter = new MetaTraderAdapter({
      gateway: new MetaApiGateway({
        clientUrl: sim.clientApiUrls['new-york']!,
        token: sim.token,
        accountId: p.accountId,
        fetch: counting,
      }),
      platform: 'mt5',
      pollIntervalMs: NO_POLL_MS,
      stream: {
        clientUrl: sim.streamUrls['new-york']!,
        token: sim.token,
        accountId: p.accountId,
        reconnectMinMs: 20,
        reconnectMaxMs: 50,
      },
    });
    await adapter.connect();
    off = adapter.subscribe((ev) => seen.push(ev));
    await until('the stream is synchronized', () => adapter.streaming, 10_000);
  }, 30_000);
  afterAll(async () => {
    off();
    await adapter?.close();
    await sim?.close();
  });

  const count = (kind: BrokerEvent['kind'], id: string) =>
    seen.filter((e) => e.kind === kind && (e.position?.id ?? e.order?.id) === id).length;
  let tagSeq = 0;
  const tag = () => `st${++tagSeq}`;
  const buy = () =>
    broker.placeOrder(simId, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag: tag() })
      .position!;

  it('declares native streaming events', () => {
    expect(adapter.capabilities.has.streamingEvents).toBe(true);
  });

  it('a Master fill reaches subscribe() from the stream, without a REST read', async () => {
    restReads.length = 0;
    const pos = buy();
    await expect.poll(() => count('position_opened', pos.id), { timeout: 5_000 }).toBe(1);
    broker.modifyPosition(simId, pos.id, { stopLoss: dec('1.07000'), takeProfit: null });
    await expect.poll(() => count('position_modified', pos.id), { timeout: 5_000 }).toBe(1);
    broker.closePosition(simId, pos.id, dec('0.04'));
    await expect.poll(() => count('position_reduced', pos.id), { timeout: 5_000 }).toBe(1);
    broker.closePosition(simId, pos.id);
    await expect.poll(() => count('position_closed', pos.id), { timeout: 5_000 }).toBe(1);
    expect(restReads).toEqual([]);
  });

  it('a pending order filled at the broker is reported filled from the stream alone', async () => {
    restReads.length = 0;
    const order = broker.placeOrder(simId, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.1'),
      price: dec('1.07500'),
      tag: tag(),
    }).order;
    await expect.poll(() => count('order_placed', order.id), { timeout: 5_000 }).toBe(1);
    broker.setPrice('EURUSD', '1.07400');
    await expect.poll(() => count('order_filled', order.id), { timeout: 5_000 }).toBe(1);
    // The update carried the final order: no history read was needed to tell filled from cancelled.
    expect(restReads).toEqual([]);
    broker.setPrice('EURUSD', '1.08000');
    for (const p of broker.positions(simId)) broker.closePosition(simId, p.id);
  });

  it('after the simulator drops the socket, the resynchronization reports what changed meanwhile, once', async () => {
    const kept = buy();
    const closedMeanwhile = buy();
    await expect.poll(() => count('position_opened', closedMeanwhile.id), { timeout: 5_000 }).toBe(1);
    sim.stream.refuse(true);
    sim.stream.drop();
    await expect.poll(() => adapter.streaming, { timeout: 5_000 }).toBe(false);
    const openedMeanwhile = buy();
    broker.closePosition(simId, closedMeanwhile.id);
    const limit = broker.placeOrder(simId, {
      symbol: 'EURUSD',
      side: 'sell',
      type: 'limit',
      volume: dec('0.2'),
      price: dec('1.09000'),
      tag: tag(),
    }).order;
    // Nothing can arrive while the stream is refused and the poll is minutes away.
    expect(count('position_opened', openedMeanwhile.id)).toBe(0);
    sim.stream.refuse(false);
    await expect.poll(() => adapter.streaming, { timeout: 10_000 }).toBe(true);
    await expect.poll(() => count('position_opened', openedMeanwhile.id), { timeout: 5_000 }).toBe(1);
    expect(count('position_closed', closedMeanwhile.id)).toBe(1);
    expect(count('order_placed', limit.id)).toBe(1);
    expect(count('position_opened', kept.id)).toBe(1);
    // The stream carries on after the resynchronization.
    const after = buy();
    await expect.poll(() => count('position_opened', after.id), { timeout: 5_000 }).toBe(1);
    expect(seen.filter((e) => e.kind === 'position_opened' && e.position?.id === kept.id)).toHaveLength(1);
  });

  it('a wrong token is refused at the handshake and the adapter falls back to polling', async () => {
    const p = sim.accounts()[0]!;
    const polled = new MetaTraderAdapter({
      gateway: new MetaApiGateway({ clientUrl: sim.clientApiUrls['new-york']!, token: sim.token, accountId: p.id }),
      platform: 'mt5',
      pollIntervalMs: 250,
      stream: {
        clientUrl: sim.streamUrls['new-york']!,
        token: 'not-the-token',
        accountId: p.id,
        reconnectMinMs: 50,
        reconnectMaxMs: 100,
      },
    });
    const got: BrokerEvent[] = [];
    const stop = polled.subscribe((ev) => got.push(ev));
    try {
      // Polling needs its baseline first: nudge until a change is reported (no sleep).
      const pos = buy();
      let nudge = 0;
      await expect
        .poll(
          () => {
            if (got.some((e) => e.position?.id === pos.id)) return true;
            const stopLoss = dec('1.07000').minus(dec('0.00001').mul(++nudge));
            broker.modifyPosition(simId, pos.id, { stopLoss, takeProfit: null });
            return false;
          },
          { timeout: 10_000, interval: 300 },
        )
        .toBe(true);
      expect(polled.streaming).toBe(false);
    } finally {
      stop();
      await polled.close();
    }
  });
});
