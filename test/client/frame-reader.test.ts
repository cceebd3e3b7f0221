import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { FrameReader } from '../../src/client/frame-reader.js';
import { DecodeError } from '../../src/protocol/decode-error.js';

function frame(payload: Buffer): Buffer {
  const b = Buffer.allocUnsafe(4 + payload.length);
  b.writeInt32BE(payload.length, 0);
  payload.copy(b, 4);
  return b;
}

/** Payloads of mixed sizes: empty, small, around the 64 KiB scratch buffer, and a few MiB. */
function payloads(): Buffer[] {
  const sizes = [0, 1, 3, 100, 4000, 65_000, 65_532, 65_536, 70_000, 17, 0, 300_000, 5];
  return sizes.map((n, i) => Buffer.alloc(n, (i * 29 + 1) & 0xff));
}

/** Feeds `stream` the way a socket with onread does: each read fills at most `step` bytes of `buffer()`. */
function readAll(r: FrameReader, stream: Buffer, step: number): Buffer[] {
  const got: Buffer[] = [];
  let at = 0;
  while (at < stream.length) {
    const into = r.buffer();
    if (into.length === 0) throw new Error(`empty read buffer at ${at}`);
    const n = Math.min(step, into.length, stream.length - at);
    stream.copy(into, 0, at, at + n);
    at += n;
    got.push(...r.received(n));
  }
  return got;
}

describe('FrameReader', () => {
  it('returns the same frames whatever the read sizes', () => {
    const ps = payloads();
    const stream = Buffer.concat(ps.map(frame));
    for (const step of [3, 4, 5, 1000, 4099, 65_536, 1 << 20, stream.length]) {
      const got = readAll(new FrameReader(), stream, step);
      expect(got.length).toBe(ps.length);
      got.forEach((g, i) => expect(g.equals(ps[i]!)).toBe(true));
    }
  });

  it('keeps frames it returned intact while it reads on', () => {
    const ps = Array.from({ length: 400 }, (_, i) => Buffer.alloc(200 + (i % 7), i & 0xff));
    const stream = Buffer.concat(ps.map(frame));
    for (const step of [1, 777]) {
      const got = readAll(new FrameReader(), stream, step);
      got.forEach((g, i) => expect(g.equals(ps[i]!)).toBe(true));
    }
  });

  it('reads a large frame in place: the frame is the buffer the reads went into', () => {
    const payload = Buffer.alloc(1_000_000, 7);
    const stream = frame(payload);
    const r = new FrameReader();
    const first = r.buffer();
    stream.copy(first, 0, 0, 1000);
    expect(r.received(1000)).toEqual([]);
    // The rest goes straight into the frame: one read can take all of it.
    const rest = r.buffer();
    expect(rest.length).toBe(stream.length - 1000);
    stream.copy(rest, 0, 1000);
    const [got] = r.received(rest.length);
    expect(got!.buffer).toBe(rest.buffer);
    expect(got!.equals(payload)).toBe(true);
  });

  it('reads a later large frame into the buffer of one released, and never into one still held', () => {
    const r = new FrameReader();
    const one = Buffer.alloc(500_000, 1);
    const two = Buffer.alloc(400_000, 2);
    const three = Buffer.alloc(450_000, 3);
    const [a] = readAll(r, frame(one), 1 << 20);
    // Held: the next frame gets other memory, and the held one keeps its bytes.
    const [b] = readAll(r, frame(two), 1 << 20);
    expect(b!.buffer).not.toBe(a!.buffer);
    expect(a!.equals(one)).toBe(true);
    r.release(a!);
    r.release(a!); // a second release changes nothing
    const [c] = readAll(r, frame(three), 1 << 20);
    expect(c!.buffer).toBe(a!.buffer);
    expect(c!.equals(three)).toBe(true);
    expect(b!.equals(two)).toBe(true);
    // A small frame is not a pooled buffer: releasing it is ignored.
    const [d] = readAll(r, frame(Buffer.from('small')), 1 << 20);
    r.release(d!);
    const [e] = readAll(r, frame(Buffer.from('other')), 1 << 20);
    expect(d!.toString()).toBe('small');
    expect(e!.toString()).toBe('other');
  });

  it('rejects a negative or oversized frame size before allocating', () => {
    for (const size of [-1, 1025]) {
      const r = new FrameReader(1024);
      const into = r.buffer();
      into.writeInt32BE(size, 0);
      expect(() => r.received(4)).toThrow(DecodeError);
    }
  });

  it('splits what a real TCP socket with onread delivers', async () => {
    const ps = payloads();
    const stream = Buffer.concat(ps.map(frame));
    const server = net.createServer((s) => s.end(stream));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as net.AddressInfo;
      const r = new FrameReader();
      const got: Buffer[] = [];
      await new Promise<void>((resolve, reject) => {
        const s = net.connect({
          host: '127.0.0.1',
          port,
          onread: {
            buffer: () => r.buffer(),
            callback: (n: number): boolean => {
              got.push(...r.received(n));
              return true;
            },
          },
        });
        s.on('error', reject);
        s.on('close', () => resolve());
      });
      expect(got.length).toBe(ps.length);
      got.forEach((g, i) => expect(g.equals(ps[i]!)).toBe(true));
    } finally {
      server.close();
    }
  });
});
