/**
 * The client's settings, and how they are read from Kafka's own client keys (bootstrap.servers,
 * client.id, request.timeout.ms, socket.connection.setup.timeout.ms, security.protocol, sasl.*,
 * ssl.*), the way a cluster mirror's CLUSTER_MIRROR configs or a CLI's --command-config file give
 * them.
 */
import type tls from 'node:tls';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { loadKeyStore, loadTrustStore } from '../config/keystores.js';
import type { KafkaConnection } from './kafka-connection.js';
import { saslAuthenticator } from './sasl-authenticate.js';
import { saslLoginFromConfig } from './sasl-login.js';
import { tlsSockets, type BrokerAddress, type SocketFactory } from './socket-factory.js';

export interface KafkaClientOptions {
  /** host:port list (bootstrap.servers). */
  readonly bootstrapServers: readonly string[];
  readonly clientId?: string;
  /** request.timeout.ms */
  readonly requestTimeoutMs?: number;
  /** socket.connection.setup.timeout.ms */
  readonly connectTimeoutMs?: number;
  /** The transport of every connection (PLAINTEXT when absent). */
  readonly socketFactory?: SocketFactory;
  /** Runs on every new connection after ApiVersions (SASL); see KafkaConnectionOptions. */
  readonly authenticate?: (conn: KafkaConnection) => Promise<void>;
}

const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

/**
 * Builds client options from Kafka client keys; `defaultClientId` applies when client.id is
 * absent. `security.protocol` picks the transport (TLS for SSL and SASL_SSL) and whether SASL
 * runs on each connection (SASL_PLAINTEXT, SASL_SSL), as Kafka's ChannelBuilders does. Throws
 * INVALID_CONFIG naming the key that is wrong or missing.
 */
export function clientOptionsFromConfig(cfg: ReadonlyMap<string, string>, defaultClientId: string): KafkaClientOptions {
  const bootstrap = cfg.get('bootstrap.servers');
  if (bootstrap === undefined || bootstrap.trim() === '') throw new KafkaError(ErrorCode.INVALID_CONFIG, 'bootstrap.servers is required');
  const protocol = (cfg.get('security.protocol') ?? 'PLAINTEXT').toUpperCase();
  if (!SECURITY_PROTOCOLS.includes(protocol)) {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `security.protocol ${protocol} is not one of ${SECURITY_PROTOCOLS.join(', ')}`);
  }
  const out: { -readonly [K in keyof KafkaClientOptions]: KafkaClientOptions[K] } = {
    bootstrapServers: bootstrap.split(',').map((s) => s.trim()).filter((s) => s !== ''),
    clientId: cfg.get('client.id') ?? defaultClientId,
  };
  if (protocol === 'SSL' || protocol === 'SASL_SSL') out.socketFactory = tlsSockets(tlsOptionsFromConfig(cfg));
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') out.authenticate = saslAuthenticator(saslLoginFromConfig(cfg));
  const rt = numberKey(cfg, 'request.timeout.ms');
  if (rt !== undefined) out.requestTimeoutMs = rt;
  const ct = numberKey(cfg, 'socket.connection.setup.timeout.ms');
  if (ct !== undefined) out.connectTimeoutMs = ct;
  return out;
}

/**
 * ssl.* keys as Node TLS options, read with the same key and trust store loaders as the
 * broker's listeners (JKS, PKCS12, PEM files or inline PEM): the trust store verifies the
 * broker, a key store is the client certificate for mTLS.
 */
export function tlsOptionsFromConfig(cfg: ReadonlyMap<string, string>): tls.ConnectionOptions {
  const get = (k: string): string | undefined => cfg.get(k);
  const opts: tls.ConnectionOptions = {};
  const ca = loadTrustStore(get);
  if (ca !== null) opts.ca = ca;
  const key = loadKeyStore(get);
  if (key !== null) Object.assign(opts, key);
  const protocols = cfg.get('ssl.enabled.protocols');
  if (protocols !== undefined) {
    const v = protocols.split(',').map((p) => p.trim()).filter((p) => p !== '').sort();
    if (v.length > 0) {
      opts.minVersion = v[0] as tls.SecureVersion;
      opts.maxVersion = v[v.length - 1] as tls.SecureVersion;
    }
  }
  // Kafka's ssl.endpoint.identification.algorithm="" turns host name verification off; "https"
  // (the default) checks the broker's certificate names the host, as Node does by default.
  if (cfg.get('ssl.endpoint.identification.algorithm') === '') opts.checkServerIdentity = () => undefined;
  return opts;
}

function numberKey(cfg: ReadonlyMap<string, string>, key: string): number | undefined {
  const v = cfg.get(key);
  return v === undefined ? undefined : Number(v);
}

/** `host:port` (IPv6 hosts in brackets) as an address. */
export function parseHostPort(s: string): BrokerAddress {
  const i = s.lastIndexOf(':');
  if (i <= 0) throw new KafkaError(ErrorCode.INVALID_CONFIG, `bad address '${s}' (host:port expected)`);
  const host = s.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(s.slice(i + 1));
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new KafkaError(ErrorCode.INVALID_CONFIG, `bad port in '${s}'`);
  return { host, port };
}
