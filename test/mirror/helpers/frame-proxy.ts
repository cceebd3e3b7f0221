/**
 * A TCP proxy on loopback in front of a Kafka broker (which advertises the proxy's address) that can hold requests of chosen API keys:
 * while held, a connection's request frames from the first held one on stay buffered (order is
 * kept), and are forwarded on release. Everything else is piped unchanged. It lets a test stop a
 * source lookup in flight at the network, without touching the code under test.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export class FrameProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private held: ReadonlySet<number> = new Set();
  private readonly releases = new Set<() => void>();
  /** Number of request frames of a held API key that were stopped so far. */
  heldRequests = 0;
  port = 0;

  private targetPort = 0;

  /** The broker behind it; may be set after start (a broker that advertises the proxy). */
  target(port: number): void {
    this.targetPort = port;
  }

  async start(): Promise<void> {
    this.server = createServer((client) => this.onClient(client));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    const a = this.server.address();
    this.port = typeof a === 'object' && a !== null ? a.port : 0;
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Holds requests with these API keys (e.g. 3, Metadata) from now on. */
  hold(apiKeys: readonly number[]): void {
    this.held = new Set(apiKeys);
  }

  /** Forwards everything held and stops holding. */
  release(): void {
    this.held = new Set();
    for (const r of [...this.releases]) r();
    this.releases.clear();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private onClient(client: Socket): void {
    const upstream = connect(this.targetPort, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.on('data', (d) => client.write(d));
    let pending = Buffer.alloc(0);
    let holding = false;
    const forward = (): void => {
      // Whole frames only: 4-byte size, then the request header's int16 API key.
      while (pending.length >= 6) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) return;
        const apiKey = pending.readInt16BE(4);
        if (!holding && this.held.has(apiKey)) {
          holding = true;
          this.heldRequests++;
          this.releases.add(() => {
            holding = false;
            forward();
          });
        }
        if (holding) return;
        upstream.write(pending.subarray(0, 4 + size));
        pending = pending.subarray(4 + size);
      }
    };
    client.on('data', (d) => {
      pending = pending.length === 0 ? d : Buffer.concat([pending, d]);
      forward();
    });
  }
}
