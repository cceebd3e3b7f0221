import { DecodeError } from './decode-error.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * A cursor over one Buffer holding Kafka wire data (big-endian). Every length is checked
 * against the bytes that remain before anything is allocated, so hostile input can only ever
 * produce a DecodeError. Byte and record fields are returned as subarrays of the input, never
 * copies.
 */
export class Reader {
  offset: number;
  readonly end: number;

  constructor(
    readonly buf: Buffer,
    offset = 0,
    end = buf.length,
  ) {
    this.offset = offset;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  private need(n: number): number {
    const at = this.offset;
    if (n < 0 || at + n > this.end) throw new DecodeError(`need ${n} bytes, ${this.end - at} remain`, at);
    this.offset = at + n;
    return at;
  }

  bool(): boolean {
    return this.buf[this.need(1)] !== 0;
  }
  int8(): number {
    return this.buf.readInt8(this.need(1));
  }
  int16(): number {
    return this.buf.readInt16BE(this.need(2));
  }
  uint16(): number {
    return this.buf.readUInt16BE(this.need(2));
  }
  int32(): number {
    return this.buf.readInt32BE(this.need(4));
  }
  uint32(): number {
    return this.buf.readUInt32BE(this.need(4));
  }
  int64(): bigint {
    return this.buf.readBigInt64BE(this.need(8));
  }
  /** int64 as a number; throws DecodeError beyond ±2^53 (offsets, timestamps in practice). */
  int64Number(): number {
    const at = this.need(8);
    const hi = this.buf.readInt32BE(at);
    const lo = this.buf.readUInt32BE(at + 4);
    const v = hi * 4294967296 + lo;
    if (!Number.isSafeInteger(v)) throw new DecodeError('int64 beyond 2^53', at);
    return v;
  }
  float64(): number {
    return this.buf.readDoubleBE(this.need(8));
  }

  uuid(): string {
    const at = this.need(16);
    const b = this.buf;
    let s = '';
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
      s += HEX[b[at + i]!];
    }
    return s === ZERO_UUID ? ZERO_UUID : s;
  }

  /** Unsigned LEB128, at most 5 bytes, result in [0, 2^32). */
  uvarint(): number {
    let result = 0;
    let shift = 0;
    const b = this.buf;
    for (let i = 0; i < 5; i++) {
      if (this.offset >= this.end) throw new DecodeError('truncated varint', this.offset);
      const byte = b[this.offset++]!;
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
    }
    throw new DecodeError('varint longer than 5 bytes', this.offset);
  }

  /** Zig-zag signed varint (32-bit), as used inside records. */
  varint(): number {
    const u = this.uvarint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  /** Zig-zag signed varlong (64-bit), at most 10 bytes, as a bigint. */
  varlong(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.offset >= this.end) throw new DecodeError('truncated varlong', this.offset);
      const byte = this.buf[this.offset++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return (result >> 1n) ^ -(result & 1n);
      shift += 7n;
    }
    throw new DecodeError('varlong longer than 10 bytes', this.offset);
  }

  /** Zig-zag varlong as a number; throws when it does not fit in 2^53. */
  varlongNumber(): number {
    const v = this.varlong();
    if (v > 9007199254740991n || v < -9007199254740991n) throw new DecodeError('varlong beyond 2^53', this.offset);
    return Number(v);
  }

  private utf8(len: number): string {
    const at = this.need(len);
    return this.buf.toString('utf8', at, at + len);
  }

  string(): string {
    const len = this.int16();
    if (len < 0) throw new DecodeError('null string where one is required', this.offset - 2);
    return this.utf8(len);
  }
  nullableString(): string | null {
    const len = this.int16();
    if (len < 0) return len === -1 ? null : this.fail(`bad string length ${len}`);
    return this.utf8(len);
  }
  compactString(): string {
    const len = this.uvarint() - 1;
    if (len < 0) throw new DecodeError('null compact string where one is required', this.offset);
    return this.utf8(len);
  }
  compactNullableString(): string | null {
    const len = this.uvarint() - 1;
    return len < 0 ? null : this.utf8(len);
  }

  /** A subarray of `len` bytes (no copy). */
  raw(len: number): Buffer {
    const at = this.need(len);
    return this.buf.subarray(at, at + len);
  }
  bytes(): Buffer {
    const len = this.int32();
    if (len < 0) throw new DecodeError('null bytes where they are required', this.offset - 4);
    return this.raw(len);
  }
  nullableBytes(): Buffer | null {
    const len = this.int32();
    if (len < 0) return len === -1 ? null : this.fail(`bad bytes length ${len}`);
    return this.raw(len);
  }
  compactBytes(): Buffer {
    const len = this.uvarint() - 1;
    if (len < 0) throw new DecodeError('null compact bytes where they are required', this.offset);
    return this.raw(len);
  }
  compactNullableBytes(): Buffer | null {
    const len = this.uvarint() - 1;
    return len < 0 ? null : this.raw(len);
  }

  /**
   * Array length (classic: int32, -1 = null). Every element takes at least `minElementSize`
   * bytes, so a count larger than the remaining bytes allow is rejected before allocating.
   */
  arrayLength(minElementSize = 1): number {
    const n = this.int32();
    if (n < -1) this.fail(`bad array length ${n}`);
    if (n > 0 && n * minElementSize > this.remaining) this.fail(`array of ${n} cannot fit in ${this.remaining} bytes`);
    return n;
  }
  /** Compact array length (uvarint N+1, 0 = null), returned as N (-1 = null). */
  compactArrayLength(minElementSize = 1): number {
    const n = this.uvarint() - 1;
    if (n > 0 && n * minElementSize > this.remaining) this.fail(`array of ${n} cannot fit in ${this.remaining} bytes`);
    return n;
  }

  /** Skips a tagged-field section, returning unknown tags (tag → raw bytes) or null when none. */
  taggedFields(): Map<number, Buffer> | null {
    const count = this.uvarint();
    if (count === 0) return null;
    if (count > this.remaining) this.fail(`${count} tagged fields cannot fit`);
    const out = new Map<number, Buffer>();
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      const size = this.uvarint();
      out.set(tag, this.raw(size));
    }
    return out;
  }

  /** A Reader over the next `len` bytes, which this one skips (a tagged field's value). */
  sub(len: number): Reader {
    const at = this.need(len);
    return new Reader(this.buf, at, at + len);
  }

  fail(message: string): never {
    throw new DecodeError(message, this.offset);
  }
}
