import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../domain/decimal.js';
import { SimBroker } from '../broker.js';
import { type MetaApiSimServer, startMetaApiSimServer } from './server.js';

type Packet = Record<string, unknown>;

/** The streaming front end on the wire, spoken to as the official SDK does (raw socket.io, no adapter). */
describe('MetaApi simulator: streaming API at /ws', () => {
  let broker: SimBroker;
  let sim: MetaApiSimServer;
  let accountId: string;
  let simId: string;

  beforeAll(async () => {
    broker = new SimBroker({ seed: 4 });
    broker.setPrice('EURUSD', '1.08000');
    const meta = { server: 'Wire-MT5', password: 'pw', platform: 'mt5' as const };
    const acc = broker.createAccount({ balance: 10_000, meta });
    simId = acc.id;
    sim = await startMetaApiSimServer(broker, { detectionMs: 0, deployMs: 0, connectMs: 0, streamStatusMs: 50 });
    const h = { 'auth-token': sim.token, 'content-type': 'application/json' };
    const created = await fetch(`${sim.baseUrl}/users/current/accounts`, {
      method: 'POST',
      headers: { ...h, 'transaction-id': 'x'.repeat(32) },
      body: JSON.stringify({
        name: 'w',
        server: meta.server,
        login: acc.login,
        password: 'pw',
        platform: 'mt5',
        magic: 7,
      }),
    });
    let body = (await created.json()) as Packet;
    for (let i = 0; created.status === 202 && i < 50 && !body.id; i++) {
      const again = await fetch(`${sim.baseUrl}/users/current/accounts`, {
        method: 'POST',
        headers: { ...h, 'transaction-id': 'x'.repeat(32) },
        body: JSON.stringify({
          name: 'w',
          server: meta.server,
          login: acc.login,
          password: 'pw',
          platform: 'mt5',
          magic: 7,
        }),
      });
      body = (await again.json()) as Packet;
    }
    accountId = String(body.id);
    await fetch(`${sim.baseUrl}/users/current/accounts/${accountId}/deploy`, { method: 'POST', headers: h });
  });
  afterAll(async () => {
    await sim?.close();
  });

  function connect(token = sim.token): { socket: Socket; got: Packet[]; errors: Packet[]; responses: Packet[] } {
    const socket = io(sim.streamUrls['new-york']!, {
      path: '/ws',
      reconnection: false,
      query: { 'auth-token': token, protocol: '3' },
    });
    const got: Packet[] = [];
    const errors: Packet[] = [];
    const responses: Packet[] = [];
    socket.on('synchronization', (p: Packet) => got.push(p));
    socket.on('processingError', (p: Packet) => errors.push(p));
    socket.on('response', (p: Packet) => responses.push(p));
    return { socket, got, errors, responses };
  }
  const request = (s: Socket, body: Packet) => s.emit('request', { accountId, instanceIndex: 0, ...body });

  it('subscribe -> response and authenticated; synchronize -> the terminal state in order; then updates, numbered', async () => {
    const c = connect();
    try {
      await expect.poll(() => c.socket.connected).toBe(true);
      request(c.socket, { type: 'subscribe', requestId: 'r1', sessionId: 's1' });
      await expect.poll(() => c.got.some((p) => p.type === 'authenticated')).toBe(true);
      expect(c.responses).toContainEqual(expect.objectContaining({ requestId: 'r1', accountId }));
      expect(c.got.find((p) => p.type === 'authenticated')).toMatchObject({
        sessionId: 's1',
        accountId,
        host: expect.any(String),
      });
      const pos = broker.placeOrder(simId, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.1'),
        tag: 'w1',
      }).position!;
      request(c.socket, { type: 'synchronize', requestId: 'sync1', host: 'ps-mpa-0' });
      await expect.poll(() => c.got.some((p) => p.type === 'dealSynchronizationFinished')).toBe(true);
      const sync = c.got.filter((p) => p.synchronizationId === 'sync1');
      expect(sync.map((p) => p.type)).toEqual([
        'synchronizationStarted',
        'accountInformation',
        'positions',
        'orders',
        'historyOrders',
        'deals',
        'orderSynchronizationFinished',
        'dealSynchronizationFinished',
      ]);
      expect((sync[2]!.positions as Packet[]).map((p) => p.id)).toEqual([pos.id]);
      broker.closePosition(simId, pos.id);
      await expect.poll(() => c.got.some((p) => p.type === 'update')).toBe(true);
      const update = c.got.find((p) => p.type === 'update')!;
      expect(update).toMatchObject({ accountId, removedPositionIds: [pos.id] });
      const numbered = c.got.filter((p) => typeof p.sequenceNumber === 'number').map((p) => p.sequenceNumber);
      expect(numbered).toEqual(numbered.map((_, i) => i + 1));
      // status packets keep flowing on a subscribed account, unnumbered.
      await expect.poll(() => c.got.some((p) => p.type === 'status' && p.connected === true)).toBe(true);
      expect(c.got.find((p) => p.type === 'status')!.sequenceNumber).toBeUndefined();
    } finally {
      c.socket.close();
    }
  });

  it('an unknown account answers processingError NotFoundError for the request', async () => {
    const c = connect();
    try {
      c.socket.emit('request', { type: 'subscribe', accountId: 'nope', requestId: 'r2', instanceIndex: 0 });
      await expect.poll(() => c.errors.length).toBe(1);
      expect(c.errors[0]).toMatchObject({ requestId: 'r2', error: 'NotFoundError' });
    } finally {
      c.socket.close();
    }
  });

  it('a wrong auth-token is refused at the handshake', async () => {
    const c = connect('wrong');
    let refused: Error | null = null;
    c.socket.on('connect_error', (err) => {
      refused = err;
    });
    try {
      await expect.poll(() => refused?.message).toBe('UnauthorizedError');
      expect(c.socket.connected).toBe(false);
    } finally {
      c.socket.close();
    }
  });

  it('drop() cuts every stream socket; refuse() keeps new ones out until lifted', async () => {
    const c = connect();
    try {
      await expect.poll(() => sim.stream.connections()).toBeGreaterThan(0);
      sim.stream.refuse(true);
      sim.stream.drop();
      await expect.poll(() => c.socket.connected).toBe(false);
      const d = connect();
      let refused = false;
      d.socket.on('connect_error', () => {
        refused = true;
      });
      await expect.poll(() => refused).toBe(true);
      d.socket.close();
      sim.stream.refuse(false);
      const e = connect();
      await expect.poll(() => e.socket.connected).toBe(true);
      e.socket.close();
    } finally {
      sim.stream.refuse(false);
      c.socket.close();
    }
  });
});
