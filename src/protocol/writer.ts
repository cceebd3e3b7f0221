/** Largest scratch buffer a Writer allocates (unless one value needs more). */
const CHUNK = 16 * 1024;
/**
 * First scratch buffer of a Writer made without a size: most responses (a Fetch response's
 * framing around referenced record data included) fit, and Buffer.allocUnsafe serves a request
 * this small from Node's shared slab instead of allocating a new ArrayBuffer per response.
 */
const FIRST_CHUNK = 512;
/** Byte slices at least this long are referenced, not copied (record data in Fetch responses). */
const ZERO_COPY_MIN = 512;

const UUID_RE = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

/** A position reserved in a Writer, patched once its value is known (sizes, counts, CRCs). */
interface Reservation {
  readonly buf: Buffer;
  readonly offset: number;
}

/**
 * Builds Kafka wire data (big-endian) as a list of Buffers. Small values are written into
 * scratch buffers, each twice the size of the one before up to CHUNK; large byte fields (record
 * batches) are kept as references to the caller's Buffer, so a Fetch response is written without
 * copying record data. A scratch buffer is never reallocated or reused, which keeps reservations
 * valid and leaves the bytes of a response still queued on a socket untouched.
 */
export class Writer {
  private readonly chunks: Buffer[] = [];
  private cur: Buffer;
  private start = 0;
  private pos = 0;
  /** Total bytes written so far. */
  length = 0;

  constructor(initial = FIRST_CHUNK) {
    this.cur = Buffer.allocUnsafe(initial);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.cur.length) return;
    this.flushScratch();
    this.cur = Buffer.allocUnsafe(Math.max(Math.min(CHUNK, this.cur.length * 2), n));
    this.start = 0;
    this.pos = 0;
  }

  private flushScratch(): void {
    if (this.pos > this.start) this.chunks.push(this.cur.subarray(this.start, this.pos));
    this.start = this.pos;
  }

  bool(v: boolean): this {
    return this.int8(v ? 1 : 0);
  }
  int8(v: number): this {
    this.ensure(1);
    this.cur.writeInt8(v, this.pos);
    this.pos += 1;
    this.length += 1;
    return this;
  }
  int16(v: number): this {
    this.ensure(2);
    this.cur.writeInt16BE(v, this.pos);
    this.pos += 2;
    this.length += 2;
    return this;
  }
  uint16(v: number): this {
    this.ensure(2);
    this.cur.writeUInt16BE(v, this.pos);
    this.pos += 2;
    this.length += 2;
    return this;
  }
  int32(v: number): this {
    this.ensure(4);
    this.cur.writeInt32BE(v, this.pos);
    this.pos += 4;
    this.length += 4;
    return this;
  }
  uint32(v: number): this {
    this.ensure(4);
    this.cur.writeUInt32BE(v, this.pos);
    this.pos += 4;
    this.length += 4;
    return this;
  }
  int64(v: bigint): this {
    this.ensure(8);
    this.cur.writeBigInt64BE(v, this.pos);
    this.pos += 8;
    this.length += 8;
    return this;
  }
  /** int64 from a safe-integer number (no bigint allocation). */
  int64Number(v: number): this {
    if (!Number.isSafeInteger(v)) throw new RangeError(`int64 value is not a safe integer: ${v}`);
    const hi = Math.floor(v / 4294967296);
    this.ensure(8);
    this.cur.writeInt32BE(hi, this.pos);
    this.cur.writeUInt32BE(v - hi * 4294967296, this.pos + 4);
    this.pos += 8;
    this.length += 8;
    return this;
  }
  float64(v: number): this {
    this.ensure(8);
    this.cur.writeDoubleBE(v, this.pos);
    this.pos += 8;
    this.length += 8;
    return this;
  }

  uuid(v: string): this {
    if (!UUID_RE.test(v)) throw new TypeError(`not a UUID: ${v}`);
    this.ensure(16);
    this.cur.write(v.replace(/-/g, ''), this.pos, 16, 'hex');
    this.pos += 16;
    this.length += 16;
    return this;
  }

  uvarint(v: number): this {
    if (v < 0 || v > 0xffffffff || !Number.isInteger(v)) throw new RangeError(`uvarint out of range: ${v}`);
    this.ensure(5);
    const b = this.cur;
    let p = this.pos;
    while (v >= 0x80) {
      b[p++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    b[p++] = v;
    this.length += p - this.pos;
    this.pos = p;
    return this;
  }

  varint(v: number): this {
    return this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  varlong(v: bigint): this {
    let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    this.ensure(10);
    const b = this.cur;
    let p = this.pos;
    while (z >= 0x80n) {
      b[p++] = Number(z & 0x7fn) | 0x80;
      z >>= 7n;
    }
    b[p++] = Number(z);
    this.length += p - this.pos;
    this.pos = p;
    return this;
  }

  private utf8(s: string): void {
    const n = Buffer.byteLength(s);
    this.ensure(n);
    this.cur.write(s, this.pos, n, 'utf8');
    this.pos += n;
    this.length += n;
  }

  string(s: string): this {
    this.int16(Buffer.byteLength(s));
    this.utf8(s);
    return this;
  }
  nullableString(s: string | null): this {
    if (s === null) return this.int16(-1);
    return this.string(s);
  }
  compactString(s: string): this {
    this.uvarint(Buffer.byteLength(s) + 1);
    this.utf8(s);
    return this;
  }
  compactNullableString(s: string | null): this {
    if (s === null) return this.uvarint(0);
    return this.compactString(s);
  }

  /** Appends bytes: large slices by reference (no copy), small ones copied into scratch. */
  raw(b: Buffer): this {
    if (b.length >= ZERO_COPY_MIN) {
      this.flushScratch();
      this.chunks.push(b);
    } else if (b.length > 0) {
      this.ensure(b.length);
      b.copy(this.cur, this.pos);
      this.pos += b.length;
    }
    this.length += b.length;
    return this;
  }
  bytes(b: Buffer): this {
    return this.int32(b.length).raw(b);
  }
  nullableBytes(b: Buffer | null): this {
    return b === null ? this.int32(-1) : this.bytes(b);
  }
  compactBytes(b: Buffer): this {
    return this.uvarint(b.length + 1).raw(b);
  }
  compactNullableBytes(b: Buffer | null): this {
    return b === null ? this.uvarint(0) : this.compactBytes(b);
  }

  /**
   * A tagged-field section: known fields (already encoded, ascending tag order) merged with
   * unknown ones carried over from decoding, all in ascending tag order as Kafka requires.
   */
  taggedFields(known: ReadonlyArray<readonly [number, Buffer]> | null, unknown?: ReadonlyMap<number, Buffer>): this {
    const nKnown = known === null ? 0 : known.length;
    const nUnknown = unknown === undefined ? 0 : unknown.size;
    if (nKnown + nUnknown === 0) return this.uvarint(0);
    let all: Array<readonly [number, Buffer]> = known === null ? [] : known.slice();
    if (unknown !== undefined && nUnknown > 0) {
      for (const e of unknown) all.push(e);
      all = all.sort((a, b) => a[0] - b[0]);
    }
    this.uvarint(all.length);
    for (const [tag, value] of all) {
      this.uvarint(tag).uvarint(value.length).raw(value);
    }
    return this;
  }

  /** Reserves `n` bytes (≤ 16) to be patched later; the scratch buffer keeps them in place. */
  reserve(n: number): Reservation {
    this.ensure(n);
    const r = { buf: this.cur, offset: this.pos };
    this.pos += n;
    this.length += n;
    return r;
  }

  /** The written bytes as a list of Buffers (references to large slices included). */
  chunkList(): Buffer[] {
    this.flushScratch();
    return this.chunks.slice();
  }

  /** The written bytes as one Buffer (copies; for small messages and tests). */
  toBuffer(): Buffer {
    const list = this.chunkList();
    return list.length === 1 ? list[0]! : Buffer.concat(list, this.length);
  }
}

/** Size in bytes of an unsigned varint. */
export function sizeOfUvarint(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Size in bytes of a zig-zag varint. */
export function sizeOfVarint(v: number): number {
  return sizeOfUvarint(v >= 0 ? v * 2 : -v * 2 - 1);
}
