/**
 * A TCP proxy on loopback that adds a fixed one-way delay to every chunk, in both directions,
 * without limiting bandwidth: each chunk read from one side is queued with a release time
 * (arrival + delay) and written to the other side once that time has come, in order. It stands
 * in for `tc qdisc ... netem delay` on a machine whose kernel has no sch_netem.
 *
 * What it does not model: a real link's in-flight window. Bytes in the queue are held by the
 * proxy, not by the sender's TCP window, so a sender is never slowed by the delay itself, only by
 * the receiver (a write that returns false pauses the reading side until 'drain', the same
 * backpressure any socket pipe has). A client that waits for an answer before its next request,
 * as a fetcher does, still pays one round trip (2 × delay) per request, which is what this is for.
 *
 * A connection closed by either side is torn down at once, chunks still held included: enough
 * for Kafka clients, which close a connection only when done with it, not a faithful EOF.
 *
 * The delay can be changed while connections are open (`setDelayMs`); chunks already queued
 * keep their release time, so order is never broken. Every released chunk's actual hold time is
 * recorded, so a run can report how late the timers fired on a loaded machine.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

interface Held {
  readonly chunk: Buffer;
  readonly arrivedAt: number;
  readonly releaseAt: number;
}

/** One direction of one connection: a FIFO of chunks released at their time. */
class DelayedPipe {
  private readonly queue: (Held | undefined)[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly proxy: DelayProxy,
  ) {
    from.on('data', (chunk: Buffer) => this.push(chunk));
    from.on('end', () => this.whenDrained(() => to.end()));
    to.on('drain', () => from.resume());
  }

  private push(chunk: Buffer): void {
    const now = performance.now();
    const delay = this.proxy.delayMs;
    if (delay <= 0 && this.head === this.queue.length) {
      this.write(chunk);
      return;
    }
    this.queue.push({ chunk, arrivedAt: now, releaseAt: now + delay });
    if (this.timer === null) this.schedule();
  }

  private write(chunk: Buffer): void {
    if (!this.to.destroyed && !this.to.write(chunk)) this.from.pause();
  }

  private schedule(): void {
    const next = this.queue[this.head];
    if (next === undefined) return;
    this.timer = setTimeout(() => this.release(), Math.max(0, next.releaseAt - performance.now()));
  }

  private release(): void {
    this.timer = null;
    const now = performance.now();
    for (;;) {
      const h = this.queue[this.head];
      if (h === undefined || h.releaseAt > now) break;
      // Dropped as released, so a long queue does not keep sent chunks alive.
      this.queue[this.head++] = undefined;
      this.proxy.recordHold(now - h.arrivedAt);
      this.write(h.chunk);
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      const w = this.onEmpty;
      this.onEmpty = null;
      w?.();
    } else {
      this.schedule();
    }
  }

  private onEmpty: (() => void) | null = null;

  private whenDrained(fn: () => void): void {
    if (this.head === this.queue.length) fn();
    else this.onEmpty = fn;
  }

  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

export interface HoldStats {
  readonly connections: number;
  readonly chunks: number;
  readonly p50: number;
  readonly p99: number;
}

export class DelayProxy {
  delayMs = 0;
  private target: { host: string; port: number } | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly pipes = new Set<DelayedPipe>();
  private holds: number[] = [];
  private accepted = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on 127.0.0.1 (an ephemeral port); connections are refused until `setTarget`. */
  static async listen(): Promise<DelayProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('proxy has no TCP address');
    const proxy = new DelayProxy(server, addr.port);
    server.on('connection', (s) => proxy.accept(s));
    return proxy;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  setTarget(host: string, port: number): void {
    this.target = { host, port };
  }

  setDelayMs(ms: number): void {
    this.delayMs = ms;
  }

  recordHold(ms: number): void {
    this.holds.push(ms);
  }

  /**
   * Since the last call: the connections accepted, and the actual one-way hold times (ms) of
   * the chunks released (count, median, p99); then resets.
   */
  takeHoldStats(): HoldStats {
    const h = this.holds.sort((a, b) => a - b);
    const connections = this.accepted;
    this.holds = [];
    this.accepted = 0;
    const at = (q: number): number => h[Math.min(h.length - 1, Math.floor(q * h.length))] ?? 0;
    return { connections, chunks: h.length, p50: at(0.5), p99: at(0.99) };
  }

  private accept(client: Socket): void {
    const t = this.target;
    if (t === null) {
      client.destroy();
      return;
    }
    this.accepted++;
    client.setNoDelay(true);
    const upstream = connect({ host: t.host, port: t.port, noDelay: true });
    this.sockets.add(client);
    this.sockets.add(upstream);
    const up = new DelayedPipe(client, upstream, this);
    const down = new DelayedPipe(upstream, client, this);
    this.pipes.add(up);
    this.pipes.add(down);
    const teardown = (): void => {
      up.close();
      down.close();
      this.pipes.delete(up);
      this.pipes.delete(down);
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', teardown);
    upstream.on('error', teardown);
    client.on('close', teardown);
    upstream.on('close', teardown);
  }

  /** Closes the listener and every proxied connection. */
  async close(): Promise<void> {
    for (const p of this.pipes) p.close();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
