/**
 * The delaying proxy the mirror-latency benchmark runs its link through: a request/answer round
 * trip over it takes at least twice the one-way delay, and bytes cross it intact and in order in
 * both directions, however they are chunked.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DelayProxy } from '../../bench/compare/delay-proxy.js';

let echo: Server;
let proxy: DelayProxy;

beforeAll(async () => {
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  const addr = echo.address();
  if (addr === null || typeof addr === 'string') throw new Error('no echo address');
  proxy = await DelayProxy.listen();
  proxy.setTarget('127.0.0.1', addr.port);
});

afterAll(async () => {
  await proxy.close();
  await new Promise<void>((r) => echo.close(() => r()));
});

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: proxy.port, noDelay: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Writes `payload` and resolves with the first `payload.length` bytes echoed back. */
function roundTrip(s: Socket, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let n = 0;
    const onData = (b: Buffer): void => {
      parts.push(b);
      n += b.length;
      if (n >= payload.length) {
        s.off('data', onData);
        resolve(Buffer.concat(parts));
      }
    };
    s.on('data', onData);
    s.write(payload);
  });
}

describe('DelayProxy', () => {
  it('adds the one-way delay in each direction: a round trip takes at least twice it', async () => {
    const s = await open();
    try {
      proxy.setDelayMs(40);
      proxy.takeHoldStats();
      const t0 = performance.now();
      const back = await roundTrip(s, Buffer.from('ping'));
      const rtt = performance.now() - t0;
      expect(back.toString()).toBe('ping');
      expect(rtt).toBeGreaterThanOrEqual(80);
      const hold = proxy.takeHoldStats();
      expect(hold.connections).toBe(0);
      expect(hold.chunks).toBe(2);
      expect(hold.p50).toBeGreaterThanOrEqual(40);
    } finally {
      s.destroy();
      proxy.setDelayMs(0);
    }
  });

  it('carries 32 MiB each way intact and in order while delaying it', async () => {
    const s = await open();
    try {
      proxy.setDelayMs(5);
      const payload = randomBytes(32 * 2 ** 20);
      const back = await roundTrip(s, payload);
      expect(back.length).toBe(payload.length);
      expect(createHash('sha256').update(back).digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
    } finally {
      s.destroy();
      proxy.setDelayMs(0);
    }
  });
});
