import { describe, expect, it, vi } from 'vitest';
import { DecodeError } from '../../src/protocol/decode-error.js';
import { FrameDecoder } from '../../src/protocol/frame-decoder.js';

function frame(payload: Buffer): Buffer {
  const b = Buffer.allocUnsafe(4 + payload.length);
  b.writeInt32BE(payload.length, 0);
  payload.copy(b, 4);
  return b;
}

function payloads(n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => Buffer.alloc((i * 37) % 300, i & 0xff));
}

describe('FrameDecoder', () => {
  it('returns the same frames whatever the chunking', () => {
    const ps = payloads(50);
    const stream = Buffer.concat(ps.map(frame));
    for (const step of [1, 2, 3, 4, 5, 7, 64, 1000, stream.length]) {
      const d = new FrameDecoder(1024);
      const got: Buffer[] = [];
      for (let at = 0; at < stream.length; at += step) got.push(...d.push(stream.subarray(at, at + step)));
      expect(got.map((b) => b.toString('hex'))).toEqual(ps.map((b) => b.toString('hex')));
      expect(d.bufferedBytes).toBe(0);
    }
  });

  it('returns a frame inside one chunk without copying it', () => {
    const chunk = Buffer.concat([frame(Buffer.from('abc')), frame(Buffer.from('defg'))]);
    const [a, b] = new FrameDecoder().push(chunk);
    expect(a!.toString()).toBe('abc');
    expect(b!.toString()).toBe('defg');
    expect(a!.buffer).toBe(chunk.buffer);
  });

  it('keeps a partial frame until the rest arrives', () => {
    const d = new FrameDecoder();
    const f = frame(Buffer.from('hello world'));
    expect(d.push(f.subarray(0, 2))).toEqual([]);
    expect(d.push(f.subarray(2, 9))).toEqual([]);
    expect(d.bufferedBytes).toBe(5);
    expect(d.push(f.subarray(9)).map(String)).toEqual(['hello world']);
  });

  it('accepts an empty frame', () => {
    expect(new FrameDecoder().push(frame(Buffer.alloc(0)))).toEqual([Buffer.alloc(0)]);
  });

  it('rejects negative and oversized frames before buffering their payload', () => {
    const neg = Buffer.from([0xff, 0xff, 0xff, 0xfe]);
    expect(() => new FrameDecoder().push(neg)).toThrow(DecodeError);
    const huge = Buffer.alloc(4);
    huge.writeInt32BE(0x7fffffff, 0);
    expect(() => new FrameDecoder(1 << 20).push(huge)).toThrow(DecodeError);
    const d = new FrameDecoder(10);
    expect(d.push(frame(Buffer.alloc(10))).length).toBe(1);
    expect(() => d.push(frame(Buffer.alloc(11)))).toThrow(/frame size 11/);
  });

  it('copies each byte at most once when a large frame arrives in many small chunks', () => {
    const payload = Buffer.alloc(4 << 20, 7);
    const f = frame(payload);
    const d = new FrameDecoder();
    const out: Buffer[] = [];
    const alloc = vi.spyOn(Buffer, 'allocUnsafe');
    try {
      for (let at = 0; at < f.length; at += 1024) out.push(...d.push(f.subarray(at, at + 1024)));
      const allocated = alloc.mock.calls.reduce((n, c) => n + (c[0] as number), 0);
      // One allocation of the frame's size: no growing buffer, no re-copying per chunk.
      expect(allocated).toBe(payload.length);
    } finally {
      alloc.mockRestore();
    }
    expect(out.length).toBe(1);
    expect(out[0]!.equals(payload)).toBe(true);
  });
});
