import io from 'socket.io-client-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimBroker } from '../broker.js';
import { type MetaApiSimServer, startMetaApiSimServer } from './server.js';

type Packet = Record<string, unknown>;

/**
 * The simulator's host roles as the real MetaApi splits them: provisioning (and the domain lookup) on one port,
 * each region's client API and streaming on ports of their own, so a client that talks to the wrong host fails.
 */
describe('MetaApi simulator: host roles and regions', () => {
  let sim: MetaApiSimServer;
  const ids: Record<string, string> = {};
  const h = () => ({ 'auth-token': sim.token, 'content-type': 'application/json' });
  const get = async (base: string, path: string) => {
    const res = await fetch(base + path, { headers: h() });
    return { status: res.status, body: (await res.json()) as Packet };
  };

  beforeAll(async () => {
    const broker = new SimBroker({ seed: 8 });
    const meta = { server: 'Roles-MT5', password: 'pw', platform: 'mt5' as const };
    const a = broker.createAccount({ balance: 1_000, meta });
    const b = broker.createAccount({ balance: 2_000, meta });
    sim = await startMetaApiSimServer(broker, { detectionMs: 0, deployMs: 0, connectMs: 0 });
    for (const [acc, region] of [
      [a, 'new-york'],
      [b, 'london'],
    ] as const) {
      const res = await fetch(`${sim.baseUrl}/users/current/accounts`, {
        method: 'POST',
        headers: { ...h(), 'transaction-id': `${region.replace('-', '')}`.padEnd(32, 'x') },
        body: JSON.stringify({ name: region, server: meta.server, login: acc.login, password: 'pw', magic: 1, region }),
      });
      const body = (await res.json()) as Packet;
      expect(res.status).toBe(201);
      ids[region] = String(body.id);
      await fetch(`${sim.baseUrl}/users/current/accounts/${ids[region]}/deploy`, { method: 'POST', headers: h() });
    }
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('answers the SDK domain lookup on the provisioning host, and lists a host for every role', async () => {
    expect(await get(sim.baseUrl, '/users/current/servers/mt-client-api')).toEqual({
      status: 200,
      body: { domain: sim.domain, hostname: 'mt-client-api-v1' },
    });
    expect(sim.hosts).toEqual({
      [`mt-provisioning-api-v1.${sim.domain}`]: sim.baseUrl,
      [`mt-client-api-v1.new-york.${sim.domain}`]: sim.clientApiUrls['new-york'],
      [`mt-client-api-v1.london.${sim.domain}`]: sim.clientApiUrls.london,
      [`mt-client-api-v1.new-york-a.${sim.domain}`]: sim.streamUrls['new-york'],
      [`mt-client-api-v1.new-york-b.${sim.domain}`]: sim.streamUrls['new-york'],
      [`mt-client-api-v1.london-a.${sim.domain}`]: sim.streamUrls.london,
      [`mt-client-api-v1.london-b.${sim.domain}`]: sim.streamUrls.london,
    });
    expect(new Set(Object.values(sim.hosts)).size).toBe(5);
  });

  it('serves the client API only on the account region host: 404 on provisioning, streaming or the other region', async () => {
    const path = (region: string) => `/users/current/accounts/${ids[region]}/account-information`;
    expect((await get(sim.clientApiUrls['new-york']!, path('new-york'))).status).toBe(200);
    expect((await get(sim.clientApiUrls.london!, path('london'))).status).toBe(200);
    expect((await get(sim.baseUrl, path('new-york'))).status).toBe(404);
    expect((await get(sim.streamUrls['new-york']!, path('new-york'))).status).toBe(404);
    const other = await get(sim.clientApiUrls.london!, path('new-york'));
    // Same answer as an unknown account: the other region's host does not know it.
    expect(other).toMatchObject({ status: 404, body: { error: 'NotFoundError' } });
    expect(other.body.message).toBe(`Trading account with id ${ids['new-york']} not found`);
  });

  it('keeps provisioning off the client-API hosts and refuses a region it does not serve', async () => {
    expect((await get(sim.clientApiUrls['new-york']!, `/users/current/accounts/${ids['new-york']}`)).status).toBe(404);
    expect((await get(sim.clientApiUrls['new-york']!, '/users/current/servers/mt-client-api')).status).toBe(404);
    const res = await fetch(`${sim.baseUrl}/users/current/accounts`, {
      method: 'POST',
      headers: { ...h(), 'transaction-id': 'T'.repeat(32) },
      body: JSON.stringify({ name: 'x', server: 'Roles-MT5', login: '1', password: 'pw', magic: 1, region: 'tokyo' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Packet).details).toEqual([
      { parameter: 'region', message: 'region must be one of new-york, london' },
    ]);
  });

  it('accepts the SDK Engine.IO 3 handshake and speaks the sticky {index, data} envelope both ways', async () => {
    const eio3 = await fetch(`${sim.streamUrls['new-york']}/ws/?EIO=3&transport=polling&auth-token=${sim.token}`);
    expect(eio3.status).toBe(200);
    await eio3.text();
    const socket = io(sim.streamUrls['new-york']!, {
      path: '/ws',
      forceNew: true,
      reconnection: false,
      query: { 'auth-token': sim.token, clientId: '0.5', protocol: '3', stickySocketConnectionId: 'abcdefgh12345678' },
    });
    const raw: Packet[] = [];
    socket.on('response', (p: Packet) => raw.push(p));
    socket.on('synchronization', (p: Packet) => raw.push(p));
    try {
      await new Promise<void>((resolve, reject) => {
        socket.on('connect', () => resolve());
        socket.on('connect_error', reject);
      });
      const subscribe = {
        type: 'subscribe',
        accountId: ids['new-york'],
        requestId: 'r1',
        sessionId: 's1',
        instanceIndex: 0,
      };
      socket.emit('request', { index: 0, data: [subscribe] });
      // A resend of the same index is not run twice.
      socket.emit('request', { index: 0, data: [subscribe] });
      // The other region's account is unknown on this region's stream.
      socket.emit('request', { index: 1, data: [{ ...subscribe, accountId: ids.london, requestId: 'r2' }] });
      const errors: Packet[] = [];
      socket.on('processingError', (p: Packet) => errors.push(p));
      await expect.poll(() => raw.length + errors.length, { timeout: 3_000 }).toBeGreaterThanOrEqual(3);
      expect(raw.slice(0, 2)).toEqual([
        { index: 0, data: [expect.objectContaining({ type: 'response', requestId: 'r1' })] },
        { index: 1, data: [expect.objectContaining({ type: 'authenticated', sessionId: 's1' })] },
      ]);
      expect(errors).toEqual([
        { index: 2, data: [expect.objectContaining({ error: 'NotFoundError', requestId: 'r2' })] },
      ]);
      expect(raw).toHaveLength(2);
    } finally {
      socket.close();
    }
  });
});
