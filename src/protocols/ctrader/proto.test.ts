import { describe, expect, it } from 'vitest';
import { FrameReader, FrameTooLongError, frame } from './framing.js';
import { decodeEnvelope, encodeBody, encodeEnvelope, messageType } from './codec.js';
import { PT } from './payload-types.js';
import { ExecutionType, OrderType, TradeSide } from './enums.js';
import type { ExecutionEventMsg } from './messages.js';

describe('framing', () => {
  it('prefixes a 4-byte big-endian length', () => {
    const f = frame(Uint8Array.from([1, 2, 3]));
    expect([...f]).toEqual([0, 0, 0, 3, 1, 2, 3]);
  });

  it('reassembles frames split across and packed into chunks', () => {
    const a = frame(Buffer.from('hello'));
    const b = frame(Buffer.from('world!'));
    const all = Buffer.concat([a, b]);
    const r = new FrameReader();
    const out: string[] = [];
    for (let i = 0; i < all.length; i++) out.push(...r.push(all.subarray(i, i + 1)).map((x) => x.toString()));
    expect(out).toEqual(['hello', 'world!']);
    expect(new FrameReader().push(all).map((x) => x.toString())).toEqual(['hello', 'world!']);
  });

  it('refuses a frame longer than the limit', () => {
    const r = new FrameReader(10);
    expect(() => r.push(frame(Buffer.alloc(11)))).toThrow(FrameTooLongError);
  });
});

describe('codec', () => {
  it('round-trips an execution event with ids above 2^53 exactly', () => {
    const body = {
      ctidTraderAccountId: '9007199254740993',
      executionType: ExecutionType.ORDER_FILLED,
      order: {
        orderId: '18014398509481985',
        tradeData: { symbolId: '1', volume: '10000000', tradeSide: TradeSide.BUY, label: 'ct_1' },
        orderType: OrderType.MARKET,
        orderStatus: 2,
        clientOrderId: 'ct_1',
      },
    };
    const env = decodeEnvelope(encodeEnvelope(PT.EXECUTION_EVENT, body, 'm-1'));
    expect(env.payloadType).toBe(PT.EXECUTION_EVENT);
    expect(env.clientMsgId).toBe('m-1');
    const ev = env.payload as unknown as ExecutionEventMsg;
    expect(ev.ctidTraderAccountId).toBe('9007199254740993');
    expect(ev.order?.orderId).toBe('18014398509481985');
    expect(ev.order?.tradeData.volume).toBe('10000000');
    expect(ev.order?.clientOrderId).toBe('ct_1');
  });

  it('carries error codes as enum names in strings', () => {
    const env = decodeEnvelope(encodeEnvelope(PT.OA_ERROR_RES, { errorCode: 'BLOCKED_PAYLOAD_TYPE', retryAfter: 3 }));
    expect(env.payload).toMatchObject({ errorCode: 'BLOCKED_PAYLOAD_TYPE', retryAfter: '3' });
  });

  it('rejects a message missing a required field when decoding', () => {
    // Encoding does not check proto2 `required`; decoding does, and a peer's malformed frame must not pass silently.
    // An account-auth request without accessToken: the body of a message that lacks field 3.
    const env = messageType('ProtoMessage');
    const bytes = env
      .encode(
        env.fromObject({
          payloadType: PT.ACCOUNT_AUTH_REQ,
          payload: encodeBody('ProtoOAAccountAuthRes', { ctidTraderAccountId: '1' }),
        }),
      )
      .finish();
    expect(() => decodeEnvelope(bytes)).toThrow(/accessToken/);
    expect(decodeEnvelope(encodeEnvelope(PT.HEARTBEAT_EVENT, {})).payloadType).toBe(PT.HEARTBEAT_EVENT);
  });
});
