import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Reader } from '../../src/protocol/reader.js';
import { Writer, sizeOfUvarint, sizeOfVarint } from '../../src/protocol/writer.js';
import { DecodeError } from '../../src/protocol/decode-error.js';

describe('wire primitives', () => {
  it('round-trips fixed-width integers, strings, bytes and uuids', () => {
    const w = new Writer(8);
    w.int8(-3).int16(-300).uint16(65000).int32(-70000).uint32(4000000000).int64(-(2n ** 62n)).float64(1.5);
    w.string('héllo').nullableString(null).compactString('').compactNullableString(null);
    w.bytes(Buffer.from([1, 2])).nullableBytes(null).compactBytes(Buffer.alloc(0)).compactNullableBytes(null);
    w.uuid('0123abcd-4567-89ef-0123-456789abcdef').bool(true);
    const r = new Reader(w.toBuffer());
    expect([r.int8(), r.int16(), r.uint16(), r.int32(), r.uint32(), r.int64(), r.float64()]).toEqual([
      -3, -300, 65000, -70000, 4000000000, -(2n ** 62n), 1.5,
    ]);
    expect([r.string(), r.nullableString(), r.compactString(), r.compactNullableString()]).toEqual(['héllo', null, '', null]);
    expect(r.bytes()).toEqual(Buffer.from([1, 2]));
    expect(r.nullableBytes()).toBeNull();
    expect(r.compactBytes().length).toBe(0);
    expect(r.compactNullableBytes()).toBeNull();
    expect(r.uuid()).toBe('0123abcd-4567-89ef-0123-456789abcdef');
    expect(r.bool()).toBe(true);
    expect(r.remaining).toBe(0);
  });

  it('encodes varints as Kafka does', () => {
    expect(new Writer().uvarint(300).toBuffer()).toEqual(Buffer.from([0xac, 0x02]));
    expect(new Writer().varint(-1).toBuffer()).toEqual(Buffer.from([0x01]));
    expect(new Writer().varint(1).toBuffer()).toEqual(Buffer.from([0x02]));
    expect(new Writer().varlong(-(2n ** 63n)).toBuffer()).toEqual(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
  });

  it('round-trips every varint and varlong, with matching sizes', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.nat(), (i, l, u) => {
        const w = new Writer().varint(i).varlong(l).uvarint(u);
        const buf = w.toBuffer();
        const r = new Reader(buf);
        expect(r.varint()).toBe(i);
        expect(r.varlong()).toBe(l);
        expect(r.uvarint()).toBe(u);
        expect(buf.length).toBe(sizeOfVarint(i) + new Writer().varlong(l).length + sizeOfUvarint(u));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps large byte slices by reference and reservations patchable', () => {
    const big = Buffer.alloc(4096, 7);
    const w = new Writer();
    const size = w.reserve(4);
    w.int16(1).raw(big).int16(2);
    size.buf.writeInt32BE(w.length - 4, size.offset);
    const chunks = w.chunkList();
    expect(chunks).toContain(big);
    const all = w.toBuffer();
    expect(all.readInt32BE(0)).toBe(2 + 4096 + 2);
    expect(all.readInt16BE(all.length - 2)).toBe(2);
  });

  it('grows past its first scratch buffer with every reservation still patchable and earlier output untouched', () => {
    const w = new Writer();
    const reservations = [];
    for (let i = 0; i < 5000; i++) {
      reservations.push(w.reserve(4));
      w.int16(i).compactString(`s${i}`);
    }
    const before = w.toBuffer();
    // A second response built afterwards (as on a connection with two in flight) owns its own bytes.
    const next = new Writer();
    for (let i = 0; i < 5000; i++) next.int32(-1).int16(-1);
    next.toBuffer();
    expect(w.toBuffer()).toEqual(before);
    reservations.forEach((r, i) => r.buf.writeInt32BE(i, r.offset));
    const rd = new Reader(w.toBuffer());
    for (let i = 0; i < 5000; i++) expect([rd.int32(), rd.int16(), rd.compactString()]).toEqual([i, i, `s${i}`]);
  });

  it('rejects truncated and oversized input with DecodeError only', () => {
    expect(() => new Reader(Buffer.from([0, 5, 65])).string()).toThrow(DecodeError);
    expect(() => new Reader(Buffer.from([0x7f, 0xff, 0xff, 0xff])).arrayLength(4)).toThrow(DecodeError);
    expect(() => new Reader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7f])).compactArrayLength()).toThrow(DecodeError);
    expect(() => new Reader(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01])).uvarint()).toThrow(DecodeError);
    expect(() => new Reader(Buffer.from([0xff, 0xfe])).nullableString()).toThrow(DecodeError);
  });
});
