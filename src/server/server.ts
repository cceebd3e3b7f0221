/**
 * One listener: a TCP or TLS server. Owns the set of live connections so shutdown can stop
 * accepting, let every request already received be answered, and then close the sockets.
 *
 * On SSL and SASL_SSL listeners a connection exists only once its TLS handshake is done; a
 * handshake that does not finish within the authentication timeout, or that fails (TLS garbage,
 * a plaintext client, an untrusted client certificate), is dropped by node:tls before any Kafka
 * request is read.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { channel } from 'node:diagnostics_channel';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { ApiHandler } from './api-handler.js';
import { Connection, type ConnectionOptions, type HeaderVersions } from './connection.js';
import type { Logger } from '../common/logger.js';
import type { ConnectionLimits } from './connection-limits.js';
import type { ListenerSecurity } from './listener-security.js';
import type { ListenerEndpoint } from '../config/listeners.js';
import { FailedLoginLog, SaslAuthenticator } from './sasl-authenticator.js';

interface ServerOptions {
  readonly host: string;
  readonly port: number;
  readonly handlers: ReadonlyMap<number, ApiHandler>;
  readonly headers: HeaderVersions;
  readonly maxFrameBytes: number;
  readonly idleTimeoutMs: number;
  readonly maxInFlight: number;
  readonly log: Logger;
  /** The listener's advertised address (as the RequestContext reports it); PLAINTEXT on the bound port without one. */
  readonly endpoint?: () => ListenerEndpoint;
  /** TLS and SASL of this listener; none: plaintext without authentication. */
  readonly security?: ListenerSecurity;
  /** The node's connection limits, shared by its listeners; absent: none. */
  readonly limits?: ConnectionLimits;
  /** The request quota (ConnectionOptions.requestThrottleMs). */
  readonly requestThrottleMs?: ConnectionOptions['requestThrottleMs'];
  unsupportedApiVersionsBody(): Buffer;
}

const ANONYMOUS = 'User:ANONYMOUS';
/** `fjord:authentication` (shape in src/metrics/channels.ts), shared with the SASL gate. */
const authentication = channel('fjord:authentication');

export class BrokerServer {
  private readonly server: Server | TlsServer;
  private readonly connections = new Set<Connection>();
  private nextId = 0;
  private boundPort = 0;
  private readonly shutdown = new AbortController();
  private readonly failedLogins: FailedLoginLog;

  constructor(private readonly opts: ServerOptions) {
    this.failedLogins = new FailedLoginLog(opts.log);
    const tls = opts.security?.tls;
    if (tls) {
      const timeout = opts.security!.authenticationTimeoutMs || 120_000;
      const server = createTlsServer(tls.serverOptions(timeout), (socket) => this.acceptTls(socket));
      server.on('tlsClientError', (err, socket) => {
        opts.log.debug('TLS handshake failed', { client: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`, err: err.message });
        // Kafka's Selector counts a failed TLS handshake (an untrusted client certificate, say)
        // as a failed authentication of the listener.
        this.publishAuthentication(false);
        socket.destroy();
      });
      tls.watch((o) => server.setSecureContext(o), timeout);
      this.server = server;
    } else {
      this.server = createServer({ noDelay: true }, (socket) => this.accept(socket, ANONYMOUS));
    }
    this.server.on('error', (err) => opts.log.error('listener error', { err }));
    // Counted on the TCP connection, before any TLS handshake, as Kafka's acceptor counts it.
    if (opts.limits) this.server.prependListener('connection', (socket: Socket) => this.admit(socket, opts.limits!));
  }

  private get listenerName(): string {
    return this.opts.endpoint?.().name ?? 'PLAINTEXT';
  }

  private admit(socket: Socket, limits: ConnectionLimits): void {
    const listener = this.listenerName;
    const address = socket.remoteAddress ?? '?';
    const refused = limits.tryAcquire(listener, address);
    if (refused !== null) {
      this.opts.log.info('connection refused: too many connections', { client: `${address}:${socket.remotePort ?? 0}`, reason: refused });
      socket.destroy();
      return;
    }
    socket.once('close', () => limits.release(listener, address));
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

  private acceptTls(socket: TLSSocket): void {
    const principal = this.opts.security!.tls!.principalOf(socket);
    if (principal === null) {
      // ssl.client.auth=requested: no certificate is fine, an unverified one is not.
      this.opts.log.info('client certificate not trusted, closing connection', { client: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}` });
      this.publishAuthentication(false);
      socket.destroy();
      return;
    }
    // On an SSL listener the handshake is the authentication; on SASL_SSL the SASL gate counts it.
    if (!this.opts.security?.sasl) this.publishAuthentication(true);
    this.accept(socket, principal);
  }

  private publishAuthentication(success: boolean): void {
    if (authentication.hasSubscribers) authentication.publish({ listener: this.listenerName, success, reauthentication: false });
  }

  private accept(socket: Socket, transportPrincipal: string): void {
    if (socket.destroyed) return;
    const clientAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    const id = `${clientAddress}-${this.nextId++}`;
    const security = this.opts.security;
    const conn = new Connection(socket, {
      id,
      handlers: this.opts.handlers,
      headers: this.opts.headers,
      maxFrameBytes: this.opts.maxFrameBytes,
      idleTimeoutMs: this.opts.idleTimeoutMs,
      maxInFlight: this.opts.maxInFlight,
      log: this.opts.log,
      shutdown: this.shutdown.signal,
      endpoint: () => this.opts.endpoint?.() ?? { name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: this.opts.host, port: this.boundPort },
      transportPrincipal,
      sasl: security?.sasl ? new SaslAuthenticator(security.sasl, this.failedLogins, clientAddress, security.listener) : null,
      authenticationTimeoutMs: security?.authenticationTimeoutMs ?? 0,
      unsupportedApiVersionsBody: () => this.opts.unsupportedApiVersionsBody(),
      ...(this.opts.requestThrottleMs ? { requestThrottleMs: this.opts.requestThrottleMs } : {}),
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
