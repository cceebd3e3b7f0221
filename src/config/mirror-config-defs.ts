/**
 * The CLUSTER_MIRROR config resource's keys (KIP-1279 spec §6.2, Kafka's
 * `ClusterMirrorConfig.CONFIG_DEF`): how to reach the source cluster, what to mirror, and the
 * per-mirror fetch tuning, whose defaults are the broker's mirror.* keys of §6.1. The security
 * keys are Kafka's client keys (security.protocol, sasl.*, ssl.*); PASSWORD-typed ones are never
 * shown by DescribeConfigs.
 */
import { brokerDef } from './broker-config-defs.js';
import { configDef, indexDefs, splitList, type ConfigDef, type ConfigOptions, type ConfigType } from './config-def.js';

const M = (name: string, type: ConfigType, defaultValue: string | null, options: ConfigOptions = {}): ConfigDef =>
  configDef('CLUSTER_MIRROR', name, type, defaultValue, options);

/** A per-mirror override of a broker mirror.* key (§6.1: "the same keys can be overridden per mirror"). */
function perMirror(brokerKey: string): ConfigDef {
  const b = brokerDef(brokerKey);
  return M(brokerKey, b.type, b.defaultValue, { ...(b.min !== undefined ? { min: b.min } : {}), brokerKey });
}

const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

const bootstrapServers = (value: string): string | null => {
  const parts = splitList(value);
  if (parts.length === 0) return 'bootstrap.servers is empty';
  for (const p of parts) if (!/^.+:\d{1,5}$/.test(p)) return `bootstrap.servers entry '${p}' is not host:port`;
  return null;
};

/** Include/exclude filters are lists of Java-style regular expressions matched against whole names. */
const regexList = (key: string) => (value: string): string | null => {
  for (const p of splitList(value)) {
    try {
      new RegExp(`^(?:${p})$`);
    } catch {
      return `'${key}' has an invalid regular expression '${p}'`;
    }
  }
  return null;
};

const securityProtocol = (value: string): string | null =>
  SECURITY_PROTOCOLS.includes(value.toUpperCase()) ? null : `security.protocol '${value}' is not one of ${SECURITY_PROTOCOLS.join(', ')}`;

const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];

const saslMechanism = (value: string): string | null =>
  SASL_MECHANISMS.includes(value.toUpperCase()) ? null : `sasl.mechanism '${value}' is not one of ${SASL_MECHANISMS.join(', ')}`;

/** Topic keys a mirror does not copy from the source by default (spec §6.2). */
const TOPIC_PROPERTIES_EXCLUDE_DEFAULT = [
  'follower.replication.throttled.replicas',
  'leader.replication.throttled.replicas',
  'message.timestamp.difference.max.ms',
  'log.message.timestamp.before.max.ms',
  'log.message.timestamp.after.max.ms',
  'message.timestamp.type',
  'unclean.leader.election.enable',
  'min.insync.replicas',
].join(',');

export const MIRROR_CONFIG_DEFS: readonly ConfigDef[] = [
  M('bootstrap.servers', 'list', null, { required: true, validate: bootstrapServers }),
  M('mirror.source.cluster.id', 'string', null, { required: true }),
  M('client.id', 'string', null),
  M('request.timeout.ms', 'int', '30000', { min: 0 }),
  M('socket.connection.setup.timeout.ms', 'long', '10000', { min: 0 }),
  M('socket.connection.setup.timeout.max.ms', 'long', '30000', { min: 0 }),
  // The source connection's client default (Kafka's CommonClientConfigs), not the broker's listener idle time.
  M('connections.max.idle.ms', 'long', '540000'),
  perMirror('mirror.fetch.backoff.ms'),
  perMirror('mirror.fetch.wait.max.ms'),
  perMirror('mirror.fetch.min.bytes'),
  perMirror('mirror.fetch.response.max.bytes'),
  perMirror('mirror.fetch.max.bytes'),
  // Fetched bytes per fetch loop that may wait for their append while the next Fetch is out
  // (src/fetcher/source-broker-loop.ts); 0 appends each answer before the next Fetch, as Kafka's
  // fetcher does; -1 (the default) lets each loop turn the overlap on from the round trip it
  // measures to its source broker (docs/mirroring.md).
  M('mirror.fetch.pipeline.max.bytes', 'int', '-1', { min: -1 }),
  perMirror('mirror.socket.timeout.ms'),
  perMirror('mirror.socket.receive.buffer.bytes'),
  M('security.protocol', 'string', 'PLAINTEXT', { validate: securityProtocol }),
  M('sasl.mechanism', 'string', 'PLAIN', { validate: saslMechanism }),
  M('sasl.jaas.config', 'password', null),
  M('sasl.oauthbearer.token.endpoint.url', 'string', null),
  // Accepted for Kafka client configs copied as they are; the mechanism decides the login here.
  M('sasl.login.callback.handler.class', 'string', null),
  M('ssl.truststore.location', 'string', null),
  M('ssl.truststore.type', 'string', 'JKS'),
  M('ssl.truststore.certificates', 'password', null),
  M('ssl.truststore.password', 'password', null),
  M('ssl.keystore.location', 'string', null),
  M('ssl.keystore.type', 'string', 'JKS'),
  M('ssl.keystore.certificate.chain', 'password', null),
  M('ssl.keystore.key', 'password', null),
  M('ssl.keystore.password', 'password', null),
  M('ssl.key.password', 'password', null),
  M('ssl.endpoint.identification.algorithm', 'string', 'https'),
  M('ssl.enabled.protocols', 'list', 'TLSv1.2,TLSv1.3'),
  M('mirror.topic.properties.exclude', 'list', TOPIC_PROPERTIES_EXCLUDE_DEFAULT),
  M('mirror.topics.include', 'list', '', { validate: regexList('mirror.topics.include') }),
  M('mirror.topics.exclude', 'list', '__.*', { validate: regexList('mirror.topics.exclude') }),
  M('mirror.groups.include', 'list', '.*', { validate: regexList('mirror.groups.include') }),
  M('mirror.groups.exclude', 'list', '', { validate: regexList('mirror.groups.exclude') }),
  M('mirror.acls.include', 'list', '*'),
  // Off stops the group offset sync alone (e.g. during a switchover), the mirror going on.
  M('mirror.groups.sync.enabled', 'boolean', 'true'),
];

export const MIRROR_DEFS: ReadonlyMap<string, ConfigDef> = indexDefs(MIRROR_CONFIG_DEFS);
