import { DEFAULT_MAX_FRAME_SIZE } from '../protocol/frame-decoder.js';
import { DecodeError } from '../protocol/decode-error.js';

/** Bytes of the buffer small frames are read into; a frame larger than what is left of it gets its own. */
const SCRATCH_BYTES = 64 * 1024;
/** Below this much room left in the scratch buffer, a new one is started rather than reading a few bytes. */
const MIN_READ_BYTES = 4 * 1024;
/** Large frames are given buffers in multiples of this, so a released one fits the next answer of about its size. */
const FRAME_UNIT = 1024 * 1024;
/** Released frame buffers kept for reuse: a mirror fetch loop with answers overlapping their appends holds a few. */
const MAX_SPARES = 4;
/** Frames above this are never kept for reuse. */
const MAX_SPARE_BYTES = 32 * 1024 * 1024;

/**
 * Splits a byte stream into Kafka frames (int32 size, then `size` bytes) while choosing where the
 * socket reads go, for `net.Socket`'s `onread` (the kernel writes into `buffer()`, then
 * `received(n)` is told how much): sans-io, so it is tested with byte arrays.
 *
 * Small frames are read into a shared scratch buffer and returned as subarrays of it. Once a
 * frame's size is known and the frame does not fit in the scratch buffer, a Buffer of exactly
 * that size is allocated, the bytes already read are copied into it (less than the scratch
 * buffer), and every further read goes straight into it. A large Fetch response is thus never
 * copied in user space, nor assembled from socket chunks as `FrameDecoder` must when the bytes
 * come as 'data' events, and the reads into it are as large as the socket has bytes ready.
 *
 * A large frame the caller is done with may be handed back with `release`: its buffer is then
 * read into again for a later frame of at most its size, so a mirror catching up does not take a
 * fresh multi-megabyte buffer per Fetch answer (new memory, whose pages the kernel zero-fills as
 * the read touches them, and which the collector must free again). Releasing is optional: a frame
 * never released is collected, which costs an allocation, never correctness.
 *
 * A size that is negative or above `maxFrameSize` throws DecodeError before anything is
 * allocated; the connection must then be closed, since the stream cannot be resynchronised.
 *
 * Ownership contract: a frame returned by `received` belongs to the caller; after `release(frame)`
 * the caller and everyone it gave subarrays of the frame to must not touch it again.
 * Concurrency contract: one socket, one event loop; `buffer()` and `received()` alternate.
 */
export class FrameReader {
  private scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  /** Unconsumed bytes of `scratch` are [pos, end). */
  private pos = 0;
  private end = 0;
  /** A frame was returned as a subarray of `scratch`: bytes before `end` must stay as they are. */
  private shared = false;
  /** The large frame being read in place, and how much of it is filled. */
  private frame: Buffer | null = null;
  private filled = 0;
  /** Released large-frame buffers, whole (a frame is a subarray of one). */
  private readonly spares: Buffer[] = [];
  /** The whole buffer under each large frame handed out and not yet released, by its memory. */
  private readonly outstanding = new WeakMap<ArrayBufferLike, Buffer>();

  constructor(readonly maxFrameSize = DEFAULT_MAX_FRAME_SIZE) {}

  /** Where the next read should write; never empty. */
  buffer(): Buffer {
    if (this.frame !== null) return this.frame.subarray(this.filled);
    if (this.scratch.length - this.end < MIN_READ_BYTES) this.renewScratch();
    return this.scratch.subarray(this.end);
  }

  /** `n` bytes were written at the start of the last `buffer()`; returns every frame completed by them. */
  received(n: number): Buffer[] {
    const out: Buffer[] = [];
    if (this.frame !== null) {
      this.filled += n;
      if (this.filled < this.frame.length) return out;
      out.push(this.frame);
      this.frame = null;
      return out;
    }
    this.end += n;
    const s = this.scratch;
    while (this.end - this.pos >= 4) {
      const size = s.readInt32BE(this.pos);
      if (size < 0 || size > this.maxFrameSize) throw new DecodeError(`frame size ${size} outside [0, ${this.maxFrameSize}]`);
      const at = this.pos + 4;
      const have = this.end - at;
      if (have >= size) {
        out.push(s.subarray(at, at + size));
        this.shared = true;
        this.pos = at + size;
        continue;
      }
      if (at + size > s.length) {
        // It will not fit in what is left of the scratch buffer: read the rest in place.
        const frame = this.frameBuffer(size);
        s.copy(frame, 0, at, this.end);
        this.frame = frame;
        this.filled = have;
        this.pos = this.end;
      }
      break;
    }
    if (this.pos === this.end && !this.shared) {
      this.pos = 0;
      this.end = 0;
    }
    return out;
  }

  /** Gives a large frame's buffer back for reuse (see the class comment); anything else is ignored. */
  release(frame: Buffer): void {
    const whole = this.outstanding.get(frame.buffer);
    if (whole === undefined) return;
    this.outstanding.delete(frame.buffer);
    if (this.spares.length < MAX_SPARES && whole.length <= MAX_SPARE_BYTES) this.spares.push(whole);
  }

  /** `size` bytes for a frame read in place: above SCRATCH_BYTES a spare that fits, or a new buffer rounded up to FRAME_UNIT. */
  private frameBuffer(size: number): Buffer {
    if (size <= SCRATCH_BYTES) return Buffer.allocUnsafe(size);
    let whole: Buffer | undefined;
    const i = this.spares.findIndex((b) => b.length >= size);
    if (i >= 0) whole = this.spares.splice(i, 1)[0];
    whole ??= Buffer.allocUnsafeSlow(Math.ceil(size / FRAME_UNIT) * FRAME_UNIT);
    this.outstanding.set(whole.buffer, whole);
    return whole.subarray(0, size);
  }

  /**
   * The scratch buffer is (nearly) full: start a new one with its unconsumed bytes (a partial
   * frame header or a small frame's start), or move them to its front when no frame returned
   * points into it.
   */
  private renewScratch(): void {
    const rest = this.end - this.pos;
    if (this.shared) {
      const next = Buffer.allocUnsafe(SCRATCH_BYTES);
      this.scratch.copy(next, 0, this.pos, this.end);
      this.scratch = next;
      this.shared = false;
    } else {
      this.scratch.copyWithin(0, this.pos, this.end);
    }
    this.pos = 0;
    this.end = rest;
  }
}
