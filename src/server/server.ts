/**
 * The TCP listener. Owns the set of live connections so shutdown can stop accepting, let every
 * request already received be answered, and then close the sockets.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { ApiHandler } from './api-handler.js';
import { Connection, type HeaderVersions } from './connection.js';
import type { Logger } from '../common/logger.js';

export interface ServerOptions {
  readonly host: string;
  readonly port: number;
  readonly handlers: ReadonlyMap<number, ApiHandler>;
  readonly headers: HeaderVersions;
  readonly maxFrameBytes: number;
  readonly idleTimeoutMs: number;
  readonly maxInFlight: number;
  readonly log: Logger;
  unsupportedApiVersionsBody(): Buffer;
}

export class BrokerServer {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private nextId = 0;
  private boundPort = 0;
  private readonly shutdown = new AbortController();

  constructor(private readonly opts: ServerOptions) {
    this.server = createServer({ noDelay: true }, (socket) => this.accept(socket));
    this.server.on('error', (err) => opts.log.error('listener error', { err }));
  }

  get port(): number {
    return this.boundPort;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen({ host: this.opts.host, port: this.opts.port, backlog: 1024 }, () => {
        this.server.off('error', onError);
        const addr = this.server.address();
        this.boundPort = typeof addr === 'object' && addr ? addr.port : this.opts.port;
        resolve(this.boundPort);
      });
    });
  }

  private accept(socket: Socket): void {
    const id = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}-${this.nextId++}`;
    const conn = new Connection(socket, {
      id,
      handlers: this.opts.handlers,
      headers: this.opts.headers,
      maxFrameBytes: this.opts.maxFrameBytes,
      idleTimeoutMs: this.opts.idleTimeoutMs,
      maxInFlight: this.opts.maxInFlight,
      log: this.opts.log,
      shutdown: this.shutdown.signal,
      unsupportedApiVersionsBody: () => this.opts.unsupportedApiVersionsBody(),
      onClose: (c) => this.connections.delete(c),
    });
    this.connections.add(conn);
  }

  /** Stops accepting, waits (up to `graceMs`) for received requests to be answered, closes all. */
  async close(graceMs = 5000): Promise<void> {
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    // Long polls answer now with what they have, so in-flight requests finish promptly.
    this.shutdown.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.connections].map((c) => c.drained())),
      new Promise((r) => (timer = setTimeout(r, graceMs))),
    ]);
    clearTimeout(timer);
    for (const c of [...this.connections]) c.close('shutdown');
    await closed;
  }
}
