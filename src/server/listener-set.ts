/**
 * Every listener of the node, one BrokerServer each, sharing the API table. The security of each
 * listener (TLS context, SASL mechanisms) is built before any port is bound, so a listener that
 * cannot be served stops the node at start and no port is left open unprotected.
 */
import type { Logger } from '../common/logger.js';
import type { ApiHandler } from './api-handler.js';
import type { HeaderVersions } from './connection.js';
import type { SaslMechanism } from '../auth/sasl-mechanism.js';
import { ConnectionLimits, type ConfigGetter } from './connection-limits.js';
import type { ConnectionOptions } from './connection.js';
import { listenerSecurity, type ListenerSecurity, type SecurityDeps } from './listener-security.js';
import { listenerValue, type ConfigLookup, type ListenerEndpoint, type ListenerPlan, type ListenerSpec } from '../config/listeners.js';
import { BrokerServer } from './server.js';

interface ListenerSetOptions {
  readonly config: ConfigLookup;
  readonly handlers: ReadonlyMap<number, ApiHandler>;
  readonly headers: HeaderVersions;
  readonly maxFrameBytes: number;
  readonly idleTimeoutMs: number;
  readonly maxInFlight: number;
  readonly log: Logger;
  readonly security: SecurityDeps;
  /**
   * The node's effective value of a key, dynamic broker configs included: connection limits are
   * read through it on every new connection. Absent: the static config.
   */
  readonly dynamicConfig?: ConfigGetter;
  readonly requestThrottleMs?: ConnectionOptions['requestThrottleMs'];
  unsupportedApiVersionsBody(): Buffer;
}

export class BrokerListeners {
  private constructor(
    private readonly plan: ListenerPlan,
    private readonly servers: ReadonlyMap<string, BrokerServer>,
    private readonly securities: readonly ListenerSecurity[],
  ) {}

  /** Checks every listener's security, then binds them in order; throws (nothing left bound) on failure. */
  static async open(plan: ListenerPlan, opts: ListenerSetOptions): Promise<BrokerListeners> {
    // Dynamic SSL keys (an earlier AlterConfigs) count at start as they did when they were set.
    const dynamic = opts.dynamicConfig;
    const securityConfig: ConfigLookup = dynamic ? { get: (k) => dynamic(k), isExplicit: (k) => opts.config.isExplicit(k) } : opts.config;
    const securities = plan.listeners.map((spec) => listenerSecurity(spec, securityConfig, opts.security, opts.log));
    const servers = new Map<string, BrokerServer>();
    const limits = new ConnectionLimits(opts.dynamicConfig ?? ((k) => opts.config.get(k)), plan.interBrokerListener, plan.listeners.length, opts.log);
    try {
      for (const [i, spec] of plan.listeners.entries()) {
        const server: BrokerServer = new BrokerServer({
          host: spec.bindHost,
          port: spec.bindPort,
          endpoint: (): ListenerEndpoint => endpointOf(spec, server.port),
          security: securities[i]!,
          limits,
          ...(opts.requestThrottleMs ? { requestThrottleMs: opts.requestThrottleMs } : {}),
          handlers: opts.handlers,
          headers: opts.headers,
          maxFrameBytes: opts.maxFrameBytes,
          idleTimeoutMs: opts.idleTimeoutMs,
          maxInFlight: opts.maxInFlight,
          log: opts.log.child({ listener: spec.name }),
          unsupportedApiVersionsBody: () => opts.unsupportedApiVersionsBody(),
        });
        servers.set(spec.name, server);
        await server.listen();
      }
    } catch (err) {
      await Promise.all([...servers.values()].map((s) => s.close(0)));
      for (const s of securities) s.close();
      throw err;
    }
    return new BrokerListeners(plan, servers, securities);
  }

  /**
   * Checks that every TLS listener's stores load under `proposed` values (an AlterConfigs about
   * to be written); the first failure's message, or null.
   */
  checkTls(proposed: ConfigGetter): string | null {
    for (const [i, spec] of this.plan.listeners.entries()) {
      const tls = this.securities[i]!.tls;
      if (!tls) continue;
      try {
        tls.check(storeLookup(proposed, spec.name));
      } catch (err) {
        return (err as Error).message;
      }
    }
    return null;
  }

  /**
   * Serves new connections of each TLS listener whose SSL keys are among `changedKeys` with the
   * stores `current` names (Kafka's dynamic listener SSL reconfiguration); open connections keep
   * their session. A listener whose stores do not load keeps the old ones (checkTls refused them).
   */
  reconfigureTls(current: ConfigGetter, changedKeys: readonly string[]): void {
    for (const [i, spec] of this.plan.listeners.entries()) {
      const tls = this.securities[i]!.tls;
      const prefix = `listener.name.${spec.name.toLowerCase()}.ssl.`;
      if (!tls || !changedKeys.some((k) => k.startsWith(prefix))) continue;
      tls.reconfigure(storeLookup(current, spec.name));
    }
  }

  /** The listener inter-broker traffic uses; its advertised address is the node's own. */
  get interBroker(): ListenerEndpoint {
    return this.endpoint(this.plan.interBrokerListener);
  }

  endpoint(name: string): ListenerEndpoint {
    const spec = this.plan.listeners.find((l) => l.name === name);
    const server = this.servers.get(name);
    if (!spec || !server) throw new Error(`no listener ${name}`);
    return endpointOf(spec, server.port);
  }

  /** The SASL mechanisms of every SASL listener: their users are the node's users (the status page logs in with them). */
  get saslMechanisms(): SaslMechanism[] {
    return this.securities.flatMap((s) => (s.sasl ? [...s.sasl.mechanisms.values()] : []));
  }

  get endpoints(): ListenerEndpoint[] {
    return this.plan.listeners.map((l) => this.endpoint(l.name));
  }

  /** The bound port of the first listener (what a one-listener node's callers ask for). */
  get port(): number {
    return this.servers.get(this.plan.listeners[0]!.name)!.port;
  }

  get connectionCount(): number {
    let n = 0;
    for (const s of this.servers.values()) n += s.connectionCount;
    return n;
  }

  async close(graceMs?: number): Promise<void> {
    await Promise.all([...this.servers.values()].map((s) => s.close(graceMs)));
    for (const s of this.securities) s.close();
  }
}

function storeLookup(get: ConfigGetter, listener: string): (key: string) => string | undefined {
  const cfg: ConfigLookup = { get, isExplicit: () => false };
  return (key) => listenerValue(cfg, listener, key);
}

function endpointOf(spec: ListenerSpec, boundPort: number): ListenerEndpoint {
  return {
    name: spec.name,
    securityProtocol: spec.securityProtocol,
    host: spec.advertisedHost,
    port: spec.advertisedPort === 0 ? boundPort : spec.advertisedPort,
  };
}
