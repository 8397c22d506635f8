import { connect as tlsConnect } from 'node:tls';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../domain/decimal.js';
import { CTraderConnection } from '../../platforms/ctrader/connection.js';
import { OpenApiError } from '../../platforms/ctrader/errors.js';
import { ExecutionType, OrderType, TradeSide } from '../../protocols/ctrader/enums.js';
import type { ExecutionEventMsg, SymbolMsg } from '../../protocols/ctrader/messages.js';
import { decodeEnvelope } from '../../protocols/ctrader/codec.js';
import { FrameReader, frame } from '../../protocols/ctrader/framing.js';
import type { Envelope } from '../../protocols/ctrader/messages.js';
import { PT } from '../../protocols/ctrader/payload-types.js';
import { SimBroker } from '../broker.js';
import { startCTraderSimServer, type CTraderSimServer } from './server.js';

/** The front end at the protocol level: session rules, units, and the answers the fact sheet describes. */
describe('cTrader simulator front end', () => {
  let broker: SimBroker;
  let server: CTraderSimServer;
  let conn: CTraderConnection;
  let ctid: string;
  let liveCtid: string;
  let simId: string;

  beforeAll(async () => {
    broker = new SimBroker({ seed: 5 });
    simId = broker.createAccount({ balance: 10_000, meta: { ctidUserId: 'u', environment: 'demo' } }).id;
    const live = broker.createAccount({ balance: 10_000, meta: { ctidUserId: 'u', environment: 'live' } });
    broker.setPrice('EURUSD', '1.08000');
    server = await startCTraderSimServer(broker);
    ctid = server.ctidTraderAccountIdOf(simId);
    liveCtid = server.ctidTraderAccountIdOf(live.id);
    conn = new CTraderConnection({
      endpoint: { ...server.endpoints.demo, ca: server.ca },
      clientId: server.clientId,
      clientSecret: server.clientSecret,
      requestTimeoutMs: 1_000,
    });
    await conn.ready();
  });
  afterAll(async () => {
    await conn?.close();
    await server?.close();
  });

  const refused = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenApiError);
    return err as OpenApiError;
  };

  it('serves TLS with the certificate it hands out', () => {
    expect(server.ca).toMatch(/BEGIN CERTIFICATE/);
    expect(server.host).toBe('127.0.0.1');
  });

  it('account requests need account auth; auth needs a token granting the account in this environment', async () => {
    expect((await refused(conn.request(PT.TRADER_REQ, { ctidTraderAccountId: ctid }))).errorCode).toBe(
      'ACCOUNT_NOT_AUTHORIZED',
    );
    expect(
      (await refused(conn.request(PT.ACCOUNT_AUTH_REQ, { ctidTraderAccountId: ctid, accessToken: 'bogus' }))).errorCode,
    ).toBe('CH_ACCESS_TOKEN_INVALID');
    const other = server.issueTokenFor('someone-else');
    expect(
      (await refused(conn.request(PT.ACCOUNT_AUTH_REQ, { ctidTraderAccountId: ctid, accessToken: other.accessToken })))
        .errorCode,
    ).toBe('CH_ACCESS_TOKEN_INVALID');
    const { accessToken } = server.issueTokenFor('u');
    const wrongEnv = await refused(conn.request(PT.ACCOUNT_AUTH_REQ, { ctidTraderAccountId: liveCtid, accessToken }));
    expect(wrongEnv.message).toMatch(/live account/);
    const [ok] = await conn.request(PT.ACCOUNT_AUTH_REQ, { ctidTraderAccountId: ctid, accessToken });
    expect(ok!.payloadType).toBe(PT.ACCOUNT_AUTH_RES);
    expect(
      (await refused(conn.request(PT.ACCOUNT_AUTH_REQ, { ctidTraderAccountId: ctid, accessToken }))).errorCode,
    ).toBe('ALREADY_LOGGED_IN');
  });

  it('symbols carry volumes in cents of units', async () => {
    const [env] = await conn.request(PT.SYMBOL_BY_ID_REQ, { ctidTraderAccountId: ctid, symbolId: ['1'] });
    const s = (env!.payload as { symbol: SymbolMsg[] }).symbol[0]!;
    expect(s).toMatchObject({ digits: 5, lotSize: '10000000', minVolume: '100000', stepVolume: '100000' });
  });

  it('market orders refuse absolute SL/TP and take relative ones; answers are execution events', async () => {
    const base = {
      ctidTraderAccountId: ctid,
      symbolId: '1',
      orderType: OrderType.MARKET,
      tradeSide: TradeSide.BUY,
      volume: '1000000',
      clientOrderId: 'rel1',
      label: 'rel1',
    };
    const bad = await refused(conn.request(PT.NEW_ORDER_REQ, { ...base, stopLoss: 1.07 }));
    expect(bad).toMatchObject({ errorCode: 'TRADING_BAD_STOPS', source: 'order_error_event' });
    const ask = broker.quote('EURUSD').ask;
    const events = await conn.request(
      PT.NEW_ORDER_REQ,
      { ...base, relativeStopLoss: '500', relativeTakeProfit: '700' },
      {
        collect: (e) => (e.payload as unknown as ExecutionEventMsg).executionType === ExecutionType.ORDER_FILLED,
      },
    );
    expect(events.map((e) => (e.payload as unknown as ExecutionEventMsg).executionType)).toEqual([
      ExecutionType.ORDER_ACCEPTED,
      ExecutionType.ORDER_FILLED,
    ]);
    const filled = events[1]!.payload as unknown as ExecutionEventMsg;
    expect(filled.order?.clientOrderId).toBe('rel1');
    expect(filled.deal?.filledVolume).toBe('1000000');
    const pos = broker.positions(simId).find((p) => p.tag === 'rel1')!;
    expect(pos.volume.toString()).toBe('0.1');
    expect(pos.stopLoss!.toString()).toBe(ask.minus(dec('0.005')).toString());
    expect(pos.takeProfit!.toString()).toBe(ask.plus(dec('0.007')).toString());
  });

  it('unknown payload types are UNSUPPORTED_MESSAGE; heartbeats are never answered with errors', async () => {
    expect(
      (
        await refused(
          conn
            .request(PT.VERSION_REQ, {})
            .then(() => conn.request(PT.SPOT_EVENT, { ctidTraderAccountId: ctid, symbolId: '1' })),
        )
      ).errorCode,
    ).toBe('UNSUPPORTED_MESSAGE');
  });

  /** Sends raw bytes as one frame on a fresh connection and returns the first answer. */
  const rawExchange = async (message: Uint8Array): Promise<Envelope> => {
    const socket = tlsConnect({
      host: server.host,
      port: server.endpoints.demo.port,
      ca: server.ca,
      servername: 'localhost',
    });
    try {
      await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
      const reader = new FrameReader();
      const answer = new Promise<Envelope>((resolve, reject) => {
        socket.on('data', (chunk: Buffer) => {
          const [f] = reader.push(chunk);
          if (f) resolve(decodeEnvelope(f));
        });
        socket.once('error', reject);
      });
      socket.write(frame(message));
      return await answer;
    } finally {
      socket.destroy();
    }
  };

  /** ProtoMessage{payloadType=1, payload=2, clientMsgId=3} written by hand, so the payload can be anything. */
  const envelopeBytes = (payloadType: number, payload: Uint8Array, clientMsgId?: string) => {
    const w = protobuf.Writer.create()
      .uint32((1 << 3) | 0)
      .uint32(payloadType)
      .uint32((2 << 3) | 2)
      .bytes(payload);
    if (clientMsgId !== undefined) w.uint32((3 << 3) | 2).string(clientMsgId);
    return w.finish();
  };

  it('a malformed request is answered with ProtoOAErrorRes carrying the clientMsgId the envelope had', async () => {
    // ProtoOAApplicationAuthReq with its required clientSecret (field 3) missing.
    const noSecret = protobuf.Writer.create()
      .uint32((2 << 3) | 2)
      .string(server.clientId)
      .finish();
    const answer = await rawExchange(envelopeBytes(PT.APPLICATION_AUTH_REQ, noSecret, 'cm-malformed-1'));
    expect(answer).toMatchObject({
      payloadType: PT.OA_ERROR_RES,
      clientMsgId: 'cm-malformed-1',
      payload: { errorCode: 'INVALID_REQUEST' },
    });
    // A payload whose bytes are not protobuf at all (a length running past the end).
    const garbage = await rawExchange(
      envelopeBytes(PT.NEW_ORDER_REQ, Uint8Array.from([0x0a, 0x7f, 0x01]), 'cm-malformed-2'),
    );
    expect(garbage).toMatchObject({
      payloadType: PT.OA_ERROR_RES,
      clientMsgId: 'cm-malformed-2',
      payload: { errorCode: 'INVALID_REQUEST' },
    });
  });

  it('an envelope that cannot be read at all is refused without a clientMsgId', async () => {
    const answer = await rawExchange(
      Uint8Array.from([0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
    );
    expect(answer.payloadType).toBe(PT.OA_ERROR_RES);
    expect(answer.clientMsgId).toBeUndefined();
    expect(answer.payload).toMatchObject({ errorCode: 'INVALID_REQUEST' });
  });
});

describe('cTrader simulator: connections per application', () => {
  it('refuses the app auth of one connection too many with CONNECTIONS_LIMIT_EXCEEDED, and takes it once room is made', async () => {
    const broker = new SimBroker({ seed: 5 });
    const server = await startCTraderSimServer(broker, { maxConnectionsPerApp: 1 });
    let limited = 0;
    const open = (env: 'demo' | 'live' = 'live') =>
      new CTraderConnection({
        endpoint: { ...server.endpoints[env], ca: server.ca },
        clientId: server.clientId,
        clientSecret: server.clientSecret,
        requestTimeoutMs: 1_000,
        backoff: { initialMs: 20, maxMs: 100 },
        onConnectionsLimit: () => {
          limited += 1;
        },
      });
    const first = open();
    const second = open();
    const demo = open('demo');
    try {
      await first.ready();
      await expect(second.ready(300)).rejects.toThrow(/CONNECTIONS_LIMIT_EXCEEDED/);
      expect(limited).toBeGreaterThan(0);
      // Per endpoint: the demo host has its own room.
      await demo.ready();
      await first.close();
      await second.ready(2_000);
      expect(second.connected).toBe(true);
    } finally {
      await Promise.all([first.close(), second.close(), demo.close()]);
      await server.close();
    }
  });
});
