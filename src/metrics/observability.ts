/**
 * The node's observability: the HTTP listener of `metrics.listener` (Prometheus text format at
 * `/metrics`, the status page at `/` and `/status`, its body at `/status/body`, the same data as
 * JSON at `/status.json`), the request instrumentation, and slow request logging
 * (`fjord.slow.request.ms`). Off unless one of the two is configured. The listener is read-only:
 * anything but GET/HEAD gets 405. With SASL listeners the status pages ask for HTTP Basic with a
 * SASL user of the node; `/metrics` does not.
 *
 * Concurrency contract: one scrape or page build at a time recomputes the gauges; concurrent
 * scrapes wait for the running one and render its result.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Logger } from '../common/logger.js';
import type { ApiHandler } from '../server/api-handler.js';
import { basicCredentials, passwordLogin } from './http-login.js';
import { AuthenticationMetrics } from './authentication-metrics.js';
import { BrokerGauges } from './broker-gauges.js';
import { readCluster, readGroups, readMirrors } from './cluster-reads.js';
import { MirrorMetrics } from './mirror-metrics.js';
import { IsrChangeCounter } from './partition-health.js';
import type { NodeView } from './node-view.js';
import { RequestMetrics } from './request-metrics.js';
import { renderStatusBody, renderStatusPage, type StatusSnapshot } from './status-page.js';

interface ObservabilityOptions {
  /** `metrics.listener`, e.g. `http://127.0.0.1:9404`; null or empty: no listener. */
  readonly listener: string | null;
  /** `fjord.slow.request.ms`; negative: off. */
  readonly slowRequestMs: number;
  readonly view: NodeView;
  readonly log: Logger;
}

/** Parses `http://host:port` (the only scheme served). */
export function parseMetricsListener(value: string): { host: string; port: number } {
  const m = /^http:\/\/(\[[^\]]+\]|[^:/]+):(\d+)\/?$/.exec(value.trim());
  if (!m || Number(m[2]) > 65535) throw new Error(`Invalid value '${value}' for metrics.listener: expected http://host:port`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

export class Observability {
  private readonly register = new Registry();
  private readonly requests: RequestMetrics;
  private readonly gauges: BrokerGauges;
  private readonly mirrors: MirrorMetrics;
  private readonly authentication: AuthenticationMetrics;
  private readonly isrChanges: IsrChangeCounter;
  private server: Server | null = null;
  private boundPort = 0;
  private refreshing: Promise<void> | null = null;

  private constructor(private readonly opts: ObservabilityOptions) {
    collectDefaultMetrics({ register: this.register });
    this.requests = new RequestMetrics({ register: this.register, image: opts.view.image, log: opts.log, slowRequestMs: opts.slowRequestMs });
    this.gauges = new BrokerGauges(opts.view, this.register);
    this.mirrors = new MirrorMetrics(this.register, opts.view.image);
    this.authentication = new AuthenticationMetrics(this.register);
    this.isrChanges = new IsrChangeCounter(opts.view.image, opts.view.nodeId, this.register, (l) => opts.view.onMetadataChange(l));
  }

  /** null when neither the listener nor slow request logging is configured. */
  static async start(opts: ObservabilityOptions): Promise<Observability | null> {
    const listener = opts.listener?.trim() ? parseMetricsListener(opts.listener) : null;
    if (listener === null && opts.slowRequestMs < 0) return null;
    const o = new Observability(opts);
    if (listener !== null) await o.listen(listener.host, listener.port);
    return o;
  }

  /** The bound port of the HTTP listener (0 when there is none). */
  get port(): number {
    return this.boundPort;
  }

  instrument(handlers: ReadonlyMap<number, ApiHandler>): Map<number, ApiHandler> {
    return this.requests.instrument(handlers);
  }

  private listen(host: string, port: number): Promise<void> {
    const server = createServer((req, res) => void this.serve(req, res));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port }, () => {
        server.off('error', reject);
        server.on('error', (err) => this.opts.log.error('metrics listener error', { err }));
        const addr = server.address();
        this.boundPort = typeof addr === 'object' && addr ? addr.port : port;
        this.opts.log.info('metrics listener started', { url: `http://${host.includes(':') ? `[${host}]` : host}:${this.boundPort}/metrics` });
        resolve();
      });
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    try {
      if (path === '/metrics') {
        await this.refresh();
        return send(res, 200, this.register.contentType, await this.register.metrics());
      }
      if (!(await this.loggedIn(req, res))) return;
      if (path === '/' || path === '/status') return send(res, 200, 'text/html; charset=utf-8', renderStatusPage(await this.snapshot()));
      if (path === '/status/body') return send(res, 200, 'text/html; charset=utf-8', renderStatusBody(await this.snapshot()));
      if (path === '/status.json') {
        const s = await this.snapshot();
        const json = JSON.stringify({ ...s, mirrors: s.mirrors.map((m) => ({ ...m, lagSeconds: Object.fromEntries(m.lagSeconds) })) });
        return send(res, 200, 'application/json', json);
      }
      send(res, 404, 'text/plain; charset=utf-8', 'Not found. Try /metrics or /status.\n');
    } catch (err) {
      this.opts.log.error('metrics request failed', { path, err: err instanceof Error ? err : String(err) });
      send(res, 500, 'text/plain; charset=utf-8', 'Internal error\n');
    }
  }

  /**
   * With SASL listeners the status pages need HTTP Basic with a user of theirs (http-login.ts),
   * and with an authorizer that user needs DESCRIBE on the cluster; answers 401 (403 for a user
   * without DESCRIBE, 503 before the listeners are open) and false otherwise. `/metrics` stays
   * open, as Prometheus scrapes usually are.
   */
  private async loggedIn(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const mechanisms = this.opts.view.saslMechanisms();
    if (mechanisms === null) {
      send(res, 503, 'text/plain; charset=utf-8', 'Starting.\n');
      return false;
    }
    if (mechanisms.length === 0) return true;
    const given = basicCredentials(req.headers.authorization);
    if (given !== null && (await passwordLogin(mechanisms, given.user, given.password))) {
      const may = this.opts.view.mayDescribeCluster;
      if (may === undefined || may(`User:${given.user}`, `${req.socket.remoteAddress ?? ""}:${req.socket.remotePort ?? 0}`)) return true;
      send(res, 403, 'text/plain; charset=utf-8', `User:${given.user} may not DESCRIBE the cluster.\n`);
      return false;
    }
    if (given !== null) this.opts.log.warn('status page login failed', { user: given.user, client: req.socket.remoteAddress });
    res.setHeader('www-authenticate', 'Basic realm="fjord", charset="UTF-8"');
    send(res, 401, 'text/plain; charset=utf-8', 'Log in with a SASL user of this node.\n');
    return false;
  }

  /** Recomputes the scrape-time gauges; concurrent callers share one run. */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        this.requests.forgetDeletedTopics();
        await this.gauges.refresh();
        this.mirrors.update(await readMirrors(this.opts.view));
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  async snapshot(): Promise<StatusSnapshot> {
    const view = this.opts.view;
    const [cluster, groups, mirrors] = await Promise.all([readCluster(view), readGroups(view), readMirrors(view)]);
    return {
      nodeId: view.nodeId,
      advertised: view.advertised(),
      generatedAt: Date.now(),
      cluster,
      groups,
      mirrors: mirrors.map((m) => ({ ...m, lagSeconds: new Map(m.partitions.map((p) => [`${p.topic}-${p.partition}`, this.mirrors.timeLagSeconds(p)])) })),
    };
  }

  async close(): Promise<void> {
    this.requests.close();
    this.authentication.close();
    this.isrChanges.close();
    this.gauges.close();
    this.mirrors.close();
    const server = this.server;
    if (server === null) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
