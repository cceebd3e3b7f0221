/**
 * The broker's keys with Kafka's own defaults (as in Apache Kafka 4.x `KafkaConfig`,
 * `ServerLogConfigs`, `GroupCoordinatorConfig`, `TransactionLogConfig`, and KIP-1279's
 * `ClusterMirrorConfig` broker keys): the keys this node understands, or accepts as harmless
 * (e.g. replication settings of a one-node cluster). Topic, group and mirror keys that fall back
 * to a broker key take their default from this table.
 *
 * A key is read-only when the node reads it only as it starts (or not at all): a dynamic change
 * would be accepted and never applied, and Kafka reports these keys read-only too. The keys the
 * node reads at the time of use (num.partitions, default.replication.factor,
 * auto.create.topics.enable, offsets.commit.timeout.ms, the group session and heartbeat bounds that
 * per-group configs fall back to, the throttles and connection limits) stay dynamic.
 */
import { LONG_MAX, configDef, indexDefs, type ConfigDef, type ConfigOptions, type ConfigType } from './config-def.js';

const D = (name: string, type: ConfigType, defaultValue: string | null, options: ConfigOptions = {}): ConfigDef =>
  configDef('BROKER', name, type, defaultValue, options);

/** Compression codecs a producer or topic may name (Kafka's `BrokerCompressionType`). */
const COMPRESSION_TYPES: readonly string[] = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'];

export const BROKER_CONFIG_DEFS: readonly ConfigDef[] = [
  D('node.id', 'int', '1', { min: 0, readOnly: true }),
  D('broker.id', 'int', '-1', { readOnly: true }),
  D('process.roles', 'list', 'broker,controller', { readOnly: true }),
  D('listeners', 'list', 'PLAINTEXT://127.0.0.1:9092', { readOnly: true }),
  D('advertised.listeners', 'list', null, { readOnly: true }),
  D('listener.security.protocol.map', 'list', 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT', { readOnly: true }),
  D('inter.broker.listener.name', 'string', null, { readOnly: true }),
  // Kafka's default inter-broker listener is the one whose protocol this names, when no name is given.
  D('security.inter.broker.protocol', 'string', 'PLAINTEXT', { oneOf: ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'], readOnly: true }),
  D('sasl.mechanism.inter.broker.protocol', 'string', 'GSSAPI', { readOnly: true }),
  D('controller.listener.names', 'list', null, { readOnly: true }),
  D('controller.quorum.voters', 'list', '', { readOnly: true }),
  D('controller.quorum.bootstrap.servers', 'list', '', { readOnly: true }),
  D('log.dirs', 'list', null, { readOnly: true }),
  D('log.dir', 'list', './data', { readOnly: true }),
  D('metadata.log.dir', 'string', null, { readOnly: true }),
  // The cluster's metadata quorum on etcd (docs/cluster.md): unset = a node alone, as before.
  D('metadata.etcd.endpoints', 'list', null, { readOnly: true }),
  D('metadata.etcd.prefix', 'string', '/fjord', { readOnly: true }),
  // Kafka's broker liveness keys (KRaft BrokerLifecycleManager / BrokerHeartbeatManager).
  D('broker.session.timeout.ms', 'int', '9000', { min: 1, readOnly: true }),
  D('broker.heartbeat.interval.ms', 'int', '2000', { min: 1, readOnly: true }),
  D('broker.rack', 'string', null, { readOnly: true }),
  // Kafka's metadata snapshot keys (KIP-630, KIP-876): when the etcd metadata log is snapshotted.
  D('metadata.log.max.record.bytes.between.snapshots', 'long', '20971520', { min: 1, readOnly: true }),
  D('metadata.log.max.snapshot.interval.ms', 'long', '3600000', { min: 0, readOnly: true }),
  D('auto.leader.rebalance.enable', 'boolean', 'true', { readOnly: true }),
  D('leader.imbalance.check.interval.seconds', 'long', '300', { min: 1, readOnly: true }),
  D('controlled.shutdown.enable', 'boolean', 'true', { readOnly: true }),
  D('num.partitions', 'int', '1', { min: 1 }),
  D('default.replication.factor', 'int', '1', { min: 1 }),
  D('min.insync.replicas', 'int', '1', { min: 1 }),
  D('auto.create.topics.enable', 'boolean', 'true'),
  D('delete.topic.enable', 'boolean', 'true', { readOnly: true }),
  D('message.max.bytes', 'int', '1048588', { min: 0 }),
  D('socket.request.max.bytes', 'int', '104857600', { min: 1, readOnly: true }),
  D('socket.send.buffer.bytes', 'int', '102400', { readOnly: true }),
  D('socket.receive.buffer.bytes', 'int', '102400', { readOnly: true }),
  D('connections.max.idle.ms', 'long', '600000', { readOnly: true }),
  D('queued.max.requests', 'int', '500', { min: 1, readOnly: true }),
  D('max.request.partition.size.limit', 'int', '2000', { min: 1, readOnly: true }),
  D('num.network.threads', 'int', '3', { min: 1 }),
  D('num.io.threads', 'int', '8', { min: 1 }),
  D('num.recovery.threads.per.data.dir', 'int', '2', { min: 1 }),
  // Kafka 4.0 raised the floor from 14 bytes to 1 MiB (KIP-1030); segment.bytes inherits it.
  D('log.segment.bytes', 'int', '1073741824', { min: 1048576 }),
  D('log.roll.ms', 'long', null),
  D('log.roll.hours', 'int', '168', { min: 1, readOnly: true }),
  D('log.retention.ms', 'long', null),
  D('log.retention.minutes', 'int', null, { readOnly: true }),
  D('log.retention.hours', 'int', '168', { readOnly: true }),
  D('log.retention.bytes', 'long', '-1'),
  D('log.retention.check.interval.ms', 'long', '300000', { min: 1, readOnly: true }),
  D('log.cleanup.policy', 'list', 'delete'),
  D('log.cleaner.enable', 'boolean', 'true', { readOnly: true }),
  D('log.cleaner.backoff.ms', 'long', '15000', { min: 0 }),
  D('log.cleaner.delete.retention.ms', 'long', '86400000'),
  D('log.cleaner.min.compaction.lag.ms', 'long', '0'),
  D('log.cleaner.max.compaction.lag.ms', 'long', LONG_MAX, { min: 1 }),
  D('log.cleaner.min.cleanable.ratio', 'double', '0.5'),
  D('log.index.interval.bytes', 'int', '4096', { min: 0 }),
  D('log.index.size.max.bytes', 'int', '10485760', { min: 4 }),
  D('log.flush.interval.messages', 'long', LONG_MAX, { min: 1 }),
  D('log.flush.interval.ms', 'long', null),
  D('log.flush.scheduler.interval.ms', 'long', LONG_MAX, { readOnly: true }),
  // Fjord's own: unflushed bytes per log at which it fsyncs itself in the background (0: never).
  D('log.flush.ahead.bytes', 'long', '0', { min: 0 }),
  D('log.segment.delete.delay.ms', 'long', '60000'),
  D('log.message.timestamp.type', 'string', 'CreateTime', {
    oneOf: ['CreateTime', 'LogAppendTime'],
  }),
  D('log.message.timestamp.before.max.ms', 'long', LONG_MAX, { min: 0 }),
  D('log.message.timestamp.after.max.ms', 'long', '3600000', { min: 0 }),
  D('log.preallocate', 'boolean', 'false'),
  D('compression.type', 'string', 'producer', {
    oneOf: COMPRESSION_TYPES,
  }),
  D('unclean.leader.election.enable', 'boolean', 'false'),
  D('offsets.topic.num.partitions', 'int', '50', { min: 1, readOnly: true }),
  D('offsets.topic.replication.factor', 'short', '3', { min: 1, readOnly: true }),
  D('offsets.topic.segment.bytes', 'int', '104857600', { min: 1, readOnly: true }),
  D('offsets.retention.minutes', 'int', '10080', { min: 1, readOnly: true }),
  D('offsets.retention.check.interval.ms', 'long', '600000', { min: 1, readOnly: true }),
  D('offsets.commit.timeout.ms', 'int', '5000', { min: 1 }),
  D('offsets.load.buffer.size', 'int', '5242880', { min: 1, readOnly: true }),
  D('offset.metadata.max.bytes', 'int', '4096', { readOnly: true }),
  D('group.initial.rebalance.delay.ms', 'int', '3000', { min: 0, readOnly: true }),
  D('group.min.session.timeout.ms', 'int', '6000', { readOnly: true }),
  D('group.max.session.timeout.ms', 'int', '1800000', { readOnly: true }),
  D('group.max.size', 'int', '2147483647', { min: 1, readOnly: true }),
  D('group.coordinator.rebalance.protocols', 'list', 'classic,consumer,streams', { readOnly: true }),
  D('group.consumer.session.timeout.ms', 'int', '45000', { min: 1 }),
  D('group.consumer.min.session.timeout.ms', 'int', '45000', { min: 1 }),
  D('group.consumer.max.session.timeout.ms', 'int', '60000', { min: 1 }),
  D('group.consumer.heartbeat.interval.ms', 'int', '5000', { min: 1 }),
  D('group.consumer.min.heartbeat.interval.ms', 'int', '5000', { min: 1 }),
  D('group.consumer.max.heartbeat.interval.ms', 'int', '15000', { min: 1 }),
  D('group.consumer.max.size', 'int', '2147483647', { min: 1, readOnly: true }),
  D('group.consumer.assignors', 'list', 'uniform,range', { readOnly: true }),
  // Streams groups (KIP-1071): Kafka's GroupCoordinatorConfig streams keys.
  D('group.streams.session.timeout.ms', 'int', '45000', { min: 1 }),
  D('group.streams.min.session.timeout.ms', 'int', '45000', { min: 1 }),
  D('group.streams.max.session.timeout.ms', 'int', '60000', { min: 1 }),
  D('group.streams.heartbeat.interval.ms', 'int', '5000', { min: 1 }),
  D('group.streams.min.heartbeat.interval.ms', 'int', '5000', { min: 1 }),
  D('group.streams.max.heartbeat.interval.ms', 'int', '15000', { min: 1 }),
  D('group.streams.num.standby.replicas', 'int', '0', { min: 0 }),
  D('group.streams.max.standby.replicas', 'int', '2', { min: 0 }),
  D('group.streams.max.size', 'int', '2147483647', { min: 1, readOnly: true }),
  // Share groups (KIP-932): Kafka's GroupCoordinatorConfig and ShareGroupConfig share keys.
  D('group.share.session.timeout.ms', 'int', '45000', { min: 1 }),
  D('group.share.min.session.timeout.ms', 'int', '45000', { min: 1 }),
  D('group.share.max.session.timeout.ms', 'int', '60000', { min: 1 }),
  D('group.share.heartbeat.interval.ms', 'int', '5000', { min: 1 }),
  D('group.share.min.heartbeat.interval.ms', 'int', '5000', { min: 1 }),
  D('group.share.max.heartbeat.interval.ms', 'int', '15000', { min: 1 }),
  D('group.share.max.size', 'int', '200', { min: 1, readOnly: true }),
  D('group.share.assignors', 'list', 'simple', { readOnly: true }),
  D('group.share.record.lock.duration.ms', 'int', '30000', { min: 1000 }),
  D('group.share.min.record.lock.duration.ms', 'int', '15000', { min: 1000 }),
  D('group.share.max.record.lock.duration.ms', 'int', '60000', { min: 1000 }),
  D('group.share.delivery.count.limit', 'int', '5', { min: 2 }),
  D('group.share.min.delivery.count.limit', 'int', '2', { min: 2 }),
  D('group.share.max.delivery.count.limit', 'int', '10', { min: 2 }),
  D('group.share.partition.max.record.locks', 'int', '2000', { min: 100 }),
  D('group.share.min.partition.max.record.locks', 'int', '100', { min: 100 }),
  D('group.share.max.partition.max.record.locks', 'int', '4000', { min: 100 }),
  D('group.share.max.share.sessions', 'int', '2000', { min: 1, readOnly: true }),
  // The share coordinator's internal topic (Kafka's ShareCoordinatorConfig).
  D('share.coordinator.state.topic.num.partitions', 'int', '50', { min: 1, readOnly: true }),
  D('share.coordinator.state.topic.replication.factor', 'short', '3', { min: 1, readOnly: true }),
  D('share.coordinator.state.topic.min.isr', 'int', '2', { min: 1, readOnly: true }),
  D('transaction.state.log.num.partitions', 'int', '50', { min: 1, readOnly: true }),
  D('transaction.state.log.replication.factor', 'short', '3', { min: 1, readOnly: true }),
  D('transaction.state.log.min.isr', 'int', '2', { min: 1, readOnly: true }),
  D('transaction.state.log.segment.bytes', 'int', '104857600', { min: 1, readOnly: true }),
  D('transaction.max.timeout.ms', 'int', '900000', { min: 1, readOnly: true }),
  D('transactional.id.expiration.ms', 'int', '604800000', { min: 1, readOnly: true }),
  // Kafka's AddPartitionsToTxnConfig (KIP-890): the backoff of a leader's own verification retries.
  D('add.partitions.to.txn.retry.backoff.ms', 'int', '20', { min: 1, readOnly: true }),
  D('add.partitions.to.txn.retry.backoff.max.ms', 'int', '100', { min: 0, readOnly: true }),
  D('transaction.abort.timed.out.transaction.cleanup.interval.ms', 'int', '10000', { min: 1, readOnly: true }),
  D('transaction.remove.expired.transaction.cleanup.interval.ms', 'int', '3600000', { min: 1, readOnly: true }),
  D('producer.id.expiration.ms', 'int', '86400000', { min: 1 }),
  D('producer.id.expiration.check.interval.ms', 'int', '600000', { min: 1 }),
  D('max.incremental.fetch.session.cache.slots', 'int', '1000', { min: 0, readOnly: true }),
  // KIP-227 names it; Kafka hard-codes it (KafkaBroker.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS).
  D('min.incremental.fetch.session.eviction.ms', 'long', '120000', { min: 0 }),
  D('fetch.max.bytes', 'int', '57671680', { min: 1024, readOnly: true }),
  D('replica.fetch.max.bytes', 'int', '1048576', { readOnly: true }),
  // Followers and the ISR (Kafka's ReplicationConfigs), read by src/replication.
  D('replica.fetch.response.max.bytes', 'int', '10485760', { min: 0, readOnly: true }),
  D('replica.fetch.wait.max.ms', 'int', '500', { min: 0, readOnly: true }),
  D('replica.fetch.min.bytes', 'int', '1', { min: 0, readOnly: true }),
  D('replica.fetch.backoff.ms', 'int', '1000', { min: 0, readOnly: true }),
  D('replica.lag.time.max.ms', 'long', '30000', { min: 1, readOnly: true }),
  D('num.replica.fetchers', 'int', '1', { min: 1 }),
  D('unstable.api.versions.enable', 'boolean', 'false'),
  // Kafka's secret for dynamic password configs (PasswordEncoderConfigs); accepted and never shown.
  D('password.encoder.secret', 'password', null, { readOnly: true }),
  // Cluster mirroring (KIP-1279 broker configs); src/mirror reads them through the coordinator
  // host's config lookup (mirrorBrokerConfig), so defaults and validation live here. The mirror
  // reads them once, when the node starts: read-only, so a dynamic change is refused rather than
  // accepted and left unapplied. The reference's mirror.admin.listener.name and
  // sasl.mechanism.mirror.admin.protocol are not defined: the node's own mirror writes (offsets,
  // configs, ACLs) always go to its inter-broker listener as the broker, the reference's default.
  D('mirror.state.topic.num.partitions', 'int', '50', { min: 1, readOnly: true }),
  D('mirror.state.topic.replication.factor', 'int', '3', { min: 1, readOnly: true }),
  D('mirror.num.replica.fetchers', 'int', '1', { min: 1, readOnly: true }),
  D('mirror.metadata.refresh.interval.ms', 'long', '60000', { min: 1, readOnly: true }),
  D('mirror.failed.retry.initial.backoff.ms', 'long', '1000', { min: 0, readOnly: true }),
  D('mirror.failed.retry.max.backoff.ms', 'long', '300000', { min: 0, readOnly: true }),
  D('mirror.failed.retry.max.attempts', 'int', '100', { min: 0, readOnly: true }),
  D('mirror.fetch.backoff.ms', 'int', '1000', { min: 0, readOnly: true }),
  D('mirror.fetch.wait.max.ms', 'int', '1000', { min: 0, readOnly: true }),
  D('mirror.fetch.min.bytes', 'int', '1', { min: 0, readOnly: true }),
  D('mirror.fetch.response.max.bytes', 'int', String(10 * 1024 * 1024), { min: 0, readOnly: true }),
  D('mirror.fetch.max.bytes', 'int', String(1024 * 1024), { min: 0, readOnly: true }),
  D('mirror.socket.timeout.ms', 'int', '30000', { min: 0, readOnly: true }),
  D('mirror.socket.receive.buffer.bytes', 'int', String(64 * 1024), { readOnly: true }),
  // The MirrorReplication quota: bytes/s for all mirror fetching of this node (dynamic, like
  // Kafka's follower.replication.throttled.rate); Long.MAX_VALUE is no throttle.
  D('mirror.replication.throttled.rate', 'long', LONG_MAX, { min: 0 }),
  // Reassignment throttles (Kafka's ReplicationQuotaManagerConfig), bytes/s, dynamic per node as
  // kafka-reassign-partitions --throttle sets them; they cap only the partitions a topic lists
  // in leader/follower.replication.throttled.replicas (src/replication/replication-quotas.ts).
  D('leader.replication.throttled.rate', 'long', LONG_MAX, { min: 0 }),
  D('follower.replication.throttled.rate', 'long', LONG_MAX, { min: 0 }),
  D('metrics.listener', 'string', null, { readOnly: true }),
  D('log.format', 'string', 'json', { oneOf: ['json', 'text'], readOnly: true }),
  D('fjord.slow.request.ms', 'long', '-1', { readOnly: true }),
  // Listener security (Kafka's BrokerSecurityConfigs / SslConfigs / SaslConfigs); src/server reads
  // them per listener (`listener.name.<name>.<key>` first), see src/server/listener-security.ts.
  D('sasl.enabled.mechanisms', 'list', 'GSSAPI', { readOnly: true }),
  // The authorizer (Kafka's StandardAuthorizer and its keys); src/broker/authz/install.ts reads them.
  D('authorizer.class.name', 'string', '', { readOnly: true }),
  D('super.users', 'string', null, { readOnly: true }),
  D('allow.everyone.if.no.acl.found', 'boolean', 'false', { readOnly: true }),
  D('sasl.jaas.config', 'password', null, { readOnly: true }),
  D('sasl.server.max.receive.size', 'int', '524288', { min: 1, readOnly: true }),
  D('sasl.oauthbearer.jwks.endpoint.url', 'string', null, { readOnly: true }),
  D('sasl.oauthbearer.expected.audience', 'list', null, { readOnly: true }),
  D('sasl.oauthbearer.expected.issuer', 'string', null, { readOnly: true }),
  D('sasl.oauthbearer.sub.claim.name', 'string', 'sub', { readOnly: true }),
  D('sasl.oauthbearer.clock.skew.seconds', 'int', '30', { min: 0, readOnly: true }),
  D('connections.max.reauth.ms', 'long', '0', { min: 0, readOnly: true }),
  D('connection.failed.authentication.delay.ms', 'int', '100', { min: 0, readOnly: true }),
  D('fjord.authentication.timeout.ms', 'long', '10000', { min: 0, readOnly: true }),
  D('ssl.keystore.type', 'string', 'JKS', { readOnly: true }),
  D('ssl.keystore.location', 'string', null, { readOnly: true }),
  D('ssl.keystore.password', 'password', null, { readOnly: true }),
  D('ssl.keystore.certificate.chain', 'password', null, { readOnly: true }),
  D('ssl.keystore.key', 'password', null, { readOnly: true }),
  D('ssl.key.password', 'password', null, { readOnly: true }),
  D('ssl.truststore.type', 'string', 'JKS', { readOnly: true }),
  D('ssl.truststore.location', 'string', null, { readOnly: true }),
  D('ssl.truststore.password', 'password', null, { readOnly: true }),
  D('ssl.truststore.certificates', 'password', null, { readOnly: true }),
  D('ssl.client.auth', 'string', 'none', { oneOf: ['required', 'requested', 'none'], readOnly: true }),
  D('ssl.principal.mapping.rules', 'string', 'DEFAULT', { readOnly: true }),
  D('ssl.enabled.protocols', 'list', 'TLSv1.2,TLSv1.3', { readOnly: true }),
  D('ssl.cipher.suites', 'list', '', { readOnly: true }),
  D('ssl.endpoint.identification.algorithm', 'string', 'https', { readOnly: true }),
  D('ssl.allow.dn.changes', 'boolean', 'false', { readOnly: true }),
  D('ssl.allow.san.changes', 'boolean', 'false', { readOnly: true }),
  // Client quotas (Kafka's QuotaConfig) and connection limits (SocketServerConfigs); src/quota and
  // src/server/connection-limits.ts read them. The limits are dynamic, as in Kafka.
  D('quota.window.num', 'int', '11', { min: 1, readOnly: true }),
  D('quota.window.size.seconds', 'int', '1', { min: 1, readOnly: true }),
  D('controller.quota.window.num', 'int', '11', { min: 1, readOnly: true }),
  D('controller.quota.window.size.seconds', 'int', '1', { min: 1, readOnly: true }),
  D('max.connections', 'int', '2147483647', { min: 0 }),
  D('max.connections.per.ip', 'int', '2147483647', { min: 0 }),
  D('max.connections.per.ip.overrides', 'string', ''),
];

export const BROKER_DEFS: ReadonlyMap<string, ConfigDef> = indexDefs(BROKER_CONFIG_DEFS);

const LISTENER_PREFIX = /^listener\.name\.([a-z0-9_]+)\.(.+)$/;
const MECHANISM_JAAS = /^[a-z0-9-]+\.sasl\.jaas\.config$/;

/**
 * The definition of a broker key, a per-listener key (`listener.name.<listener>.<key>`, Kafka's
 * ListenerName.configPrefix) included: it is the definition of the key it overrides, and
 * `listener.name.<listener>.<mechanism>.sasl.jaas.config` is `sasl.jaas.config`'s.
 */
export function brokerDefOf(key: string): ConfigDef | undefined {
  const direct = BROKER_DEFS.get(key);
  if (direct !== undefined) return direct;
  const m = LISTENER_PREFIX.exec(key);
  if (!m) return undefined;
  const rest = m[2]!;
  return BROKER_DEFS.get(rest) ?? (MECHANISM_JAAS.test(rest) ? BROKER_DEFS.get('sasl.jaas.config') : undefined);
}

/** A broker key's definition, for the tables of other scopes that fall back to it. */
export function brokerDef(key: string): ConfigDef {
  const def = BROKER_DEFS.get(key);
  if (def === undefined) throw new Error(`no broker config ${key}`);
  return def;
}

/** A broker key's default as a number; for keys that have one. */
export function brokerDefaultNumber(key: string): number {
  return Number(brokerDef(key).defaultValue);
}
