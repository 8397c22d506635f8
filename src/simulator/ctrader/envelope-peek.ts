import protobuf from 'protobufjs';

/** ProtoMessage field 3 (clientMsgId, a string): fact sheet §2. */
const CLIENT_MSG_ID_FIELD = 3;
const LENGTH_DELIMITED = 2;

/**
 * Reads only the clientMsgId of a ProtoMessage whose payload could not be decoded, so the error answer can
 * still be correlated as the real server's is. Returns undefined when the envelope itself is unreadable.
 */
export function peekClientMsgId(bytes: Uint8Array): string | undefined {
  try {
    const r = protobuf.Reader.create(bytes);
    let found: string | undefined;
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag >>> 3 === CLIENT_MSG_ID_FIELD && (tag & 7) === LENGTH_DELIMITED) found = r.string();
      else r.skipType(tag & 7);
    }
    return found === '' ? undefined : found;
  } catch {
    return undefined;
  }
}
