/**
 * TCP framing of the protobuf port (fact sheet §2): a 4-byte big-endian unsigned length, then that many bytes
 * of a serialized ProtoMessage.
 */

/** Frames above this are a protocol error; the official Python SDK accepts up to 15,000,000 bytes. */
export const MAX_FRAME_BYTES = 15_000_000;

export function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(4 + message.length);
  out.writeUInt32BE(message.length, 0);
  out.set(message, 4);
  return out;
}

export class FrameTooLongError extends Error {
  constructor(readonly length: number) {
    super(`frame of ${length} bytes exceeds ${MAX_FRAME_BYTES}`);
    this.name = 'FrameTooLongError';
  }
}

/** Reassembles frames from arbitrary TCP chunks (a frame may span chunks, a chunk may hold many frames). */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrame = MAX_FRAME_BYTES) {}

  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const frames: Buffer[] = [];
    while (this.buf.length >= 4) {
      const len = this.buf.readUInt32BE(0);
      if (len > this.maxFrame) throw new FrameTooLongError(len);
      if (this.buf.length < 4 + len) break;
      frames.push(this.buf.subarray(4, 4 + len));
      this.buf = this.buf.subarray(4 + len);
    }
    return frames;
  }

  get buffered(): number {
    return this.buf.length;
  }
}
