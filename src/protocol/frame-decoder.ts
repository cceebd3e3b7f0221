import { DecodeError } from './decode-error.js';

/** Kafka's default `socket.request.max.bytes` (100 MiB). */
export const DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024;

/**
 * Splits a byte stream into Kafka frames (int32 size, then `size` bytes). Fed socket chunks of
 * any size via `push`, it returns every frame completed so far, without the size prefix.
 *
 * Chunks are kept as a list, never concatenated: a frame lying inside one chunk is returned as
 * a subarray of it (no copy), and only a frame that spans chunks is copied once into a Buffer of
 * its exact size. Each byte is therefore copied at most once, whatever the chunking.
 *
 * A size that is negative or above `maxFrameSize` throws DecodeError before anything is
 * allocated; the connection must then be closed, since the stream cannot be resynchronised.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  /** Index of the first unconsumed chunk in `chunks`. */
  private first = 0;
  /** Bytes of chunks[first] already consumed. */
  private head = 0;
  /** Unconsumed bytes across all chunks. */
  private buffered = 0;
  /** Payload size of the frame being assembled, once its size field has been read. */
  private pendingSize = -1;

  constructor(readonly maxFrameSize = DEFAULT_MAX_FRAME_SIZE) {}

  /** Bytes received but not yet returned as part of a frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    for (;;) {
      if (this.pendingSize < 0) {
        if (this.buffered < 4) break;
        const size = this.readSize();
        if (size < 0 || size > this.maxFrameSize) {
          throw new DecodeError(`frame size ${size} outside [0, ${this.maxFrameSize}]`);
        }
        this.pendingSize = size;
      }
      if (this.buffered < this.pendingSize) break;
      out.push(this.take(this.pendingSize));
      this.pendingSize = -1;
    }
    this.compact();
    return out;
  }

  private readSize(): number {
    const c = this.chunks[this.first]!;
    if (c.length - this.head >= 4) {
      const v = c.readInt32BE(this.head);
      this.consume(4);
      return v;
    }
    const b = this.take(4);
    return b.readInt32BE(0);
  }

  /** Removes `n` (≤ buffered) bytes from the front and returns them. */
  private take(n: number): Buffer {
    if (n === 0) return EMPTY;
    const c = this.chunks[this.first]!;
    if (c.length - this.head >= n) {
      const frame = c.subarray(this.head, this.head + n);
      this.consume(n);
      return frame;
    }
    const frame = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const cur = this.chunks[this.first]!;
      const avail = cur.length - this.head;
      const m = Math.min(avail, n - filled);
      cur.copy(frame, filled, this.head, this.head + m);
      filled += m;
      this.consume(m);
    }
    return frame;
  }

  private consume(n: number): void {
    this.buffered -= n;
    this.head += n;
    const c = this.chunks[this.first];
    if (c !== undefined && this.head === c.length) {
      this.chunks[this.first] = EMPTY;
      this.first++;
      this.head = 0;
    }
  }

  private compact(): void {
    if (this.first === this.chunks.length) {
      this.chunks = [];
      this.first = 0;
    } else if (this.first > 64 && this.first * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.first);
      this.first = 0;
    }
  }
}

const EMPTY = Buffer.alloc(0);
