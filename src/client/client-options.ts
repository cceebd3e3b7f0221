/**
 * The client's settings, and how they are read from Kafka's own client keys (bootstrap.servers,
 * client.id, request.timeout.ms, socket.connection.setup.timeout.ms, security.protocol, ssl.*),
 * the way a cluster mirror's CLUSTER_MIRROR configs or a CLI's --command-config file give them.
 */
import { readFileSync } from 'node:fs';
import type tls from 'node:tls';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { KafkaConnection } from './kafka-connection.js';
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

/** Builds client options from Kafka client keys; `defaultClientId` applies when client.id is absent. */
export function clientOptionsFromConfig(cfg: ReadonlyMap<string, string>, defaultClientId: string): KafkaClientOptions {
  const bootstrap = cfg.get('bootstrap.servers');
  if (bootstrap === undefined || bootstrap.trim() === '') throw new KafkaError(ErrorCode.INVALID_CONFIG, 'bootstrap.servers is required');
  const protocol = (cfg.get('security.protocol') ?? 'PLAINTEXT').toUpperCase();
  if (protocol !== 'PLAINTEXT' && protocol !== 'SSL') {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `security.protocol ${protocol} is not supported by the client (PLAINTEXT, SSL)`);
  }
  const out: { -readonly [K in keyof KafkaClientOptions]: KafkaClientOptions[K] } = {
    bootstrapServers: bootstrap.split(',').map((s) => s.trim()).filter((s) => s !== ''),
    clientId: cfg.get('client.id') ?? defaultClientId,
  };
  if (protocol === 'SSL') out.socketFactory = tlsSockets(tlsOptionsFromConfig(cfg));
  const rt = numberKey(cfg, 'request.timeout.ms');
  if (rt !== undefined) out.requestTimeoutMs = rt;
  const ct = numberKey(cfg, 'socket.connection.setup.timeout.ms');
  if (ct !== undefined) out.connectTimeoutMs = ct;
  return out;
}

/** ssl.* keys as Node TLS options: PEM truststore and keystore (inline or from a file). */
function tlsOptionsFromConfig(cfg: ReadonlyMap<string, string>): tls.ConnectionOptions {
  const opts: tls.ConnectionOptions = {};
  const location = cfg.get('ssl.truststore.location');
  const ca = cfg.get('ssl.truststore.certificates') ?? (location === undefined ? undefined : readFileSync(location, 'utf8'));
  if (ca !== undefined) opts.ca = ca;
  const cert = cfg.get('ssl.keystore.certificate.chain');
  const key = cfg.get('ssl.keystore.key');
  if (cert !== undefined) opts.cert = cert;
  if (key !== undefined) opts.key = key;
  // Kafka's ssl.endpoint.identification.algorithm="" turns host name verification off.
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
