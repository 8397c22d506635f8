import protobuf from 'protobufjs';
import { CTRADER_PROTO } from './schema.js';
import { MESSAGE_NAME } from './payload-types.js';
import type { Envelope } from './messages.js';

const root = protobuf.parse(CTRADER_PROTO, { keepCase: true }).root;
const envelopeType = root.lookupType('ProtoMessage');
const typeCache = new Map<string, protobuf.Type>();

export function messageType(name: string): protobuf.Type {
  let t = typeCache.get(name);
  if (!t) {
    t = root.lookupType(name);
    typeCache.set(name, t);
  }
  return t;
}

// Strings for 64-bit integers: ids pass 2^53 and must survive the round trip exactly.
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: Number, bytes: Buffer, defaults: false };

/** Encodes a concrete message by its proto name (fromObject accepts decimal strings for int64 fields). */
export function encodeBody(name: string, body: Record<string, unknown>): Uint8Array {
  const t = messageType(name);
  return t.encode(t.fromObject(body)).finish();
}

export function decodeBody<T = Record<string, unknown>>(name: string, bytes: Uint8Array): T {
  const t = messageType(name);
  checkRequired(t, bytes);
  return t.toObject(t.decode(bytes), TO_OBJECT) as T;
}

/**
 * protobufjs 8 fills a missing proto2 `required` field with its default instead of failing, which would turn a
 * peer's malformed message into a plausible zero. We check the top-level field numbers on the wire ourselves.
 */
function checkRequired(t: protobuf.Type, bytes: Uint8Array): void {
  const required = t.fieldsArray.filter((f) => f.required);
  if (required.length === 0) return;
  const seen = new Set<number>();
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    seen.add(tag >>> 3);
    r.skipType(tag & 7);
  }
  const missing = required.filter((f) => !seen.has(f.id));
  if (missing.length > 0) throw new Error(`${t.name}: missing required field ${missing.map((f) => f.name).join(', ')}`);
}

/** Serializes a ProtoMessage envelope around `body` (no length prefix). */
export function encodeEnvelope(payloadType: number, body: Record<string, unknown>, clientMsgId?: string): Uint8Array {
  const name = MESSAGE_NAME[payloadType];
  if (!name) throw new Error(`no message known for payloadType ${payloadType}`);
  const env: Record<string, unknown> = { payloadType, payload: encodeBody(name, body) };
  if (clientMsgId !== undefined) env.clientMsgId = clientMsgId;
  return envelopeType.encode(envelopeType.fromObject(env)).finish();
}

/** Parses one ProtoMessage; throws on malformed bytes or a missing required field (a protocol error). */
export function decodeEnvelope(bytes: Uint8Array): Envelope {
  const env = envelopeType.toObject(envelopeType.decode(bytes), TO_OBJECT) as {
    payloadType: number;
    payload?: Uint8Array;
    clientMsgId?: string;
  };
  const name = MESSAGE_NAME[env.payloadType];
  const payload = name ? decodeBody(name, env.payload ?? new Uint8Array(0)) : null;
  const out: Envelope = { payloadType: env.payloadType, payload };
  if (env.clientMsgId !== undefined && env.clientMsgId !== '') out.clientMsgId = env.clientMsgId;
  return out;
}
