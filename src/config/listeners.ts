/**
 * The node's listeners, as Apache Kafka reads them (`KafkaConfig.listeners`,
 * `effectiveAdvertisedBrokerListeners`, `effectiveListenerSecurityProtocolMap`): every listener
 * `NAME://host:port` must have its NAME in `listener.security.protocol.map`, names and ports are
 * unique, `advertised.listeners` names only listeners that exist, and `inter.broker.listener.name`
 * names one of them. A listener the node cannot serve stops the node at start: serving a
 * SASL_SSL port as plaintext would hand a user who asked for security none at all.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

export const SecurityProtocol = {
  PLAINTEXT: 'PLAINTEXT',
  SSL: 'SSL',
  SASL_PLAINTEXT: 'SASL_PLAINTEXT',
  SASL_SSL: 'SASL_SSL',
} as const;
export type SecurityProtocol = (typeof SecurityProtocol)[keyof typeof SecurityProtocol];

const PROTOCOLS: ReadonlySet<string> = new Set(Object.values(SecurityProtocol));

/** What this module reads of the node's configuration (BrokerConfig satisfies it). */
export interface ConfigLookup {
  get(key: string): string | undefined;
  isExplicit(key: string): boolean;
}

/** A listener with the address clients are told to use for it. */
export interface ListenerEndpoint {
  readonly name: string;
  readonly securityProtocol: SecurityProtocol;
  /** Advertised host and port (the bound port when the advertised port is 0). */
  readonly host: string;
  readonly port: number;
}

export interface ListenerSpec {
  readonly name: string;
  readonly securityProtocol: SecurityProtocol;
  readonly bindHost: string;
  readonly bindPort: number;
  readonly advertisedHost: string;
  /** 0: the port the listener is bound to. */
  readonly advertisedPort: number;
}

export interface ListenerPlan {
  readonly listeners: readonly ListenerSpec[];
  readonly interBrokerListener: string;
}

interface HostPort {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

/** Kafka's default map: each security protocol names a listener of the same name. */
const DEFAULT_PROTOCOL_MAP = 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL';

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_CONFIG, message);
}

function parseHostPorts(value: string, key: string): HostPort[] {
  const out: HostPort[] = [];
  for (const part of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9_]+):\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(part);
    if (!m) throw invalid(`Invalid value '${part}' for ${key}: expected NAME://host:port`);
    const port = Number(m[3]);
    if (port > 65535) throw invalid(`Invalid port ${port} in ${key}`);
    out.push({ name: m[1]!.toUpperCase(), host: m[2]!.replace(/^\[|\]$/g, ''), port });
  }
  return out;
}

/** `listener.security.protocol.map` as listener name → security protocol. */
function parseProtocolMap(cfg: ConfigLookup): Map<string, SecurityProtocol> {
  const raw = cfg.get('listener.security.protocol.map') ?? '';
  // Unset, the map is Kafka's default; the node's own default adds CONTROLLER on top of it.
  const text = cfg.isExplicit('listener.security.protocol.map') ? raw : `${DEFAULT_PROTOCOL_MAP},${raw}`;
  const map = new Map<string, SecurityProtocol>();
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [name, protocol, ...rest] = part.split(':').map((s) => s.trim());
    if (!name || !protocol || rest.length > 0) {
      throw invalid(`Invalid value '${part}' for listener.security.protocol.map: expected LISTENER_NAME:SECURITY_PROTOCOL`);
    }
    const p = protocol.toUpperCase();
    if (!PROTOCOLS.has(p)) {
      throw invalid(`listener.security.protocol.map maps ${name} to '${protocol}', which is not a security protocol (expected one of ${[...PROTOCOLS].join(', ')})`);
    }
    map.set(name.toUpperCase(), p as SecurityProtocol);
  }
  return map;
}

function isWildcard(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::';
}

/** Reads and checks `listeners`, `advertised.listeners` and `inter.broker.listener.name`. */
export function planListeners(cfg: ConfigLookup): ListenerPlan {
  const map = parseProtocolMap(cfg);
  const bound = parseHostPorts(cfg.get('listeners') ?? '', 'listeners');
  if (bound.length === 0) throw invalid('listeners must name at least one listener');
  const names = new Set<string>();
  const ports = new Set<number>();
  for (const l of bound) {
    if (names.has(l.name)) throw invalid(`Each listener must have a different name, listeners: ${cfg.get('listeners')}`);
    names.add(l.name);
    if (l.port !== 0 && ports.has(l.port)) throw invalid(`Each listener must have a different port, listeners: ${cfg.get('listeners')}`);
    ports.add(l.port);
    if (!map.has(l.name)) {
      throw invalid(
        `No security protocol defined for listener ${l.name}: add ${l.name}:<PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL> to listener.security.protocol.map`,
      );
    }
  }
  const advertisedRaw = cfg.get('advertised.listeners');
  const advertised = new Map<string, HostPort>();
  if (advertisedRaw) {
    for (const a of parseHostPorts(advertisedRaw, 'advertised.listeners')) {
      if (!names.has(a.name)) throw invalid(`advertised.listeners names ${a.name}, which is not in listeners (${cfg.get('listeners')})`);
      advertised.set(a.name, a);
    }
  }
  const listeners = bound.map((l): ListenerSpec => {
    const a = advertised.get(l.name);
    return {
      name: l.name,
      securityProtocol: map.get(l.name)!,
      bindHost: l.host,
      bindPort: l.port,
      // A wildcard bind is advertised as loopback, as Kafka would by the canonical host name.
      advertisedHost: a ? a.host : isWildcard(l.host) ? '127.0.0.1' : l.host,
      advertisedPort: a ? a.port : l.port,
    };
  });
  const explicitInter = cfg.get('inter.broker.listener.name');
  let interBrokerListener: string;
  if (explicitInter) {
    interBrokerListener = explicitInter.toUpperCase();
    if (!names.has(interBrokerListener)) {
      throw invalid(`inter.broker.listener.name must be a listener name defined in listeners; ${explicitInter} is not one of ${[...names].join(', ')}`);
    }
    if (cfg.isExplicit('security.inter.broker.protocol')) {
      throw invalid('Only one of inter.broker.listener.name and security.inter.broker.protocol should be set');
    }
  } else if (cfg.isExplicit('security.inter.broker.protocol')) {
    // Kafka's KafkaConfig: the listener named after the protocol carries inter-broker traffic.
    interBrokerListener = (cfg.get('security.inter.broker.protocol') ?? '').trim().toUpperCase();
    if (!names.has(interBrokerListener)) {
      throw invalid(`security.inter.broker.protocol ${interBrokerListener} names no listener; listeners are ${[...names].join(', ')} (or set inter.broker.listener.name)`);
    }
  } else {
    // Kafka's default is the listener named by security.inter.broker.protocol (PLAINTEXT); a node
    // without one uses its first listener, so a lone secured node still starts.
    interBrokerListener = names.has('PLAINTEXT') ? 'PLAINTEXT' : listeners[0]!.name;
  }
  return { listeners, interBrokerListener };
}

/**
 * The value of `key` for one listener: `listener.name.<name>.<key>` first (Kafka's per-listener
 * override, the name in lower case), then the broker-wide key.
 */
export function listenerValue(cfg: ConfigLookup, listener: string, key: string): string | undefined {
  return cfg.get(`listener.name.${listener.toLowerCase()}.${key}`) ?? cfg.get(key);
}
