/**
 * One Fjord node: data directory, embedded controller and its metadata log, partition logs, the
 * API handler table, coordinators and the TCP listener, started in that order and closed in the
 * reverse order (in a cluster, first the controlled shutdown while still serving → stop
 * accepting → answer in-flight requests → coordinators → flush and close logs → clean-shutdown
 * marker → metadata log).
 */
import { AddPartitionsToTxnManager } from './add-partitions-to-txn-manager.js';
import { PLAINTEXT_INTER_BROKER, interBrokerSecurity } from '../client/inter-broker-security.js';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createGroupApiHandlers } from '../coordinator/group-api-handlers.js';
import { createTxnApiHandlers } from '../coordinator/txn-api-handlers.js';
import { createMirrorApiHandlers, type MirrorApiHandlers } from '../mirror/mirror-api-handlers.js';
import { createMirrorHost } from './mirror-host-impl.js';
import { ApiRegistry } from '../server/api-registry.js';
import type { BrokerContext, ProduceGuard } from './broker-context.js';
import type { BrokerConfig } from './config.js';
import { ConfigResolver } from './config-resolver.js';
import { Controller } from '../controller/controller.js';
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import { createCoordinatorHost } from './coordinator-host-impl.js';
import { setLogFormat, type Logger } from '../common/logger.js';
import { Observability, parseMetricsListener } from '../metrics/observability.js';
import { followCatchUp, openQuorum } from './quorum-wiring.js';
import { ActiveControllerDuties } from '../controller/active-controller.js';
import type { EtcdQuorum } from '../controller/etcd/etcd-quorum.js';
import { ProducerIdManager } from '../controller/producer-ids.js';
import { ReplicaManager } from './replica-manager.js';
import { replicationView } from './replication-view.js';
import { holdsSourceEpochs } from './mirror-epoch-policy.js';
import { LogManager } from '../storage/log-manager.js';
import { BrokerListeners } from '../server/listener-set.js';
import { planListeners } from '../config/listeners.js';
import { saslApiHandlers } from '../server/sasl-apis.js';
import { brokerHandlers, shareHandlers, streamsHandlers } from './apis/index.js';
import { createShareGroups } from './share-wiring.js';
import { wrapGroupDeletion } from './share-group-listing.js';
import { BrokerQuotas } from '../quota/broker-quotas.js';
import { authorizerFromConfig, followAcls, guardHandlers } from './authz/install.js';
import { AclOperation, CLUSTER_NAME, ResourceType } from '../auth/acl-model.js';

const INTERNAL_TOPIC_RF_KEYS: ReadonlyMap<string, string> = new Map([
  ['__consumer_offsets', 'offsets.topic.replication.factor'],
  ['__transaction_state', 'transaction.state.log.replication.factor'],
  ['__mirror_state', 'mirror.state.topic.replication.factor'],
  ['__share_group_state', 'share.coordinator.state.topic.replication.factor'],
]);

/**
 * Kafka's controlled shutdown: before the listeners close, ask the active controller to move
 * this node's leaderships away, and wait (at most one session timeout) until it leads nothing.
 */
async function controlledShutdown(controller: Controller, etcd: EtcdQuorum, timeoutMs: number, log: Logger): Promise<void> {
  const leadsSomething = (): boolean => [...controller.image.topicsByName.values()].some((t) => t.partitions.some((p) => p.leader === controller.nodeId));
  if (!leadsSomething() || etcd.fenced) return;
  await etcd.requestControlledShutdown();
  const started = Date.now();
  await new Promise<void>((res) => {
    const timer = setTimeout(done, timeoutMs);
    const off = controller.onChange(() => {
      if (!leadsSomething()) done();
    });
    function done(): void {
      clearTimeout(timer);
      off();
      res();
    }
  });
  if (leadsSomething()) throw new Error(`leaderships were not moved within ${timeoutMs} ms`);
  // Logged while the listeners still serve, before the node stops acting as a broker.
  log.info('controlled shutdown complete', { waitedMs: Date.now() - started });
}

export class BrokerNode {
  private closing: Promise<void> | null = null;

  private constructor(
    readonly ctx: BrokerContext,
    private readonly server: BrokerListeners,
    private readonly closers: (() => Promise<void>)[],
    /** The etcd membership, null for a node alone. */
    readonly quorum: EtcdQuorum | null,
    /** Runs while the listeners still serve (the controlled shutdown). */
    private readonly beforeClose: (() => Promise<void>) | null,
  ) {}

  get port(): number {
    return this.server.port;
  }

  static async start(config: BrokerConfig, log: Logger): Promise<BrokerNode> {
    setLogFormat(config.get('log.format') === 'text' ? 'text' : 'json');
    // Checked before anything is opened: a listener that cannot be served stops the start.
    const plan = planListeners(config);
    // Node-to-node connections use the inter-broker listener's security; only a cluster makes
    // them, so a node alone is not asked for inter-broker credentials.
    const interBroker = config.get('metadata.etcd.endpoints') ? interBrokerSecurity(config, plan) : PLAINTEXT_INTER_BROKER;
    const authorizer = authorizerFromConfig(config);
    const metricsListener = config.get('metrics.listener') ?? null;
    if (metricsListener) parseMetricsListener(metricsListener); // refuse a bad value before opening anything
    const logDirs = config.logDirs.map((d) => resolve(d));
    const dataDir = logDirs[0]!;
    mkdirSync(dataDir, { recursive: true });
    const nodeId = config.nodeId;
    const advertised = plan.listeners.find((l) => l.name === plan.interBrokerListener)!;

    // Assigned once the image exists; the replication-factor default reads it only after that.
    // eslint-disable-next-line prefer-const
    let configs: ConfigResolver;
    const logs = await LogManager.open({
      logDirs,
      log: log.child({ component: 'replicas' }),
      retentionCheckIntervalMs: config.int('log.retention.check.interval.ms'),
      producerIdExpirationMs: config.int('producer.id.expiration.ms'),
      cleanerEnabled: config.bool('log.cleaner.enable'),
      cleanerBackoffMs: config.int('log.cleaner.backoff.ms'),
      flushAheadBytes: config.int('log.flush.ahead.bytes'),
      // A log whose fsync failed can no longer say what is on disk (the kernel may have dropped
      // the dirty pages it could not write). As a Kafka broker whose last log dir failed, the
      // node halts: its lease lapses, the other ISR members lead its partitions, and at restart
      // recovery reads back only what the disk holds, and the logs catch up from the leaders.
      onLogDirFailure: (logDir, partition, reason) => {
        log.error('log dir failed, halting', { logDir, partition, reason });
        process.exit(1);
      },
    });
    const quorum = await openQuorum(config, plan, dataDir, logs.cleanShutdown(dataDir), log);
    const { meta, cluster, store } = quorum;
    // Internal topics take their own replication-factor keys once there is a cluster; a node
    // alone keeps creating them with its one replica, as it always did.
    const defaultReplicationFactor = (topic: string): number => {
      const key = INTERNAL_TOPIC_RF_KEYS.get(topic);
      if (key !== undefined) return quorum.etcd ? config.int(key) : 1;
      return Number(configs.brokerValue('default.replication.factor'));
    };
    const controller = await Controller.open({ nodeId, clusterId: meta.clusterId, store, log: log.child({ component: 'controller' }), cluster, defaultReplicationFactor });
    followCatchUp(quorum, controller);
    // A new cluster starts with a cluster-wide min.insync.replicas, as a Kafka 4.x controller
    // writes at bootstrap (ConfigurationControlManager's ELR safety record): clients then see it
    // reported as a dynamic default, the way Apache Kafka reports it. Only the first write of an
    // empty log does it, so nodes starting together write it once.
    const minIsr = config.get('min.insync.replicas') ?? '1';
    await controller.write((img) => (img.offset < 0 ? [{ type: 'config', resourceType: ConfigResourceType.BROKER, resourceName: '', name: 'min.insync.replicas', value: minIsr }] : []));
    configs = new ConfigResolver(config, controller.image);
    let duties: ActiveControllerDuties | null = null;
    if (quorum.etcd) {
      duties = new ActiveControllerDuties(controller, {
        uncleanAllowed: (t) => configs.topicProps(t.name)['unclean.leader.election.enable'] === 'true',
        autoLeaderRebalance: config.bool('auto.leader.rebalance.enable'),
        imbalanceCheckIntervalMs: config.int('leader.imbalance.check.interval.seconds') * 1000,
        maxBytesBetweenSnapshots: config.int('metadata.log.max.record.bytes.between.snapshots'),
        maxSnapshotIntervalMs: config.int('metadata.log.max.snapshot.interval.ms'),
        log: log.child({ component: 'controller' }),
      });
      duties.start();
    }
    const replicas = new ReplicaManager(logs, controller.image, configs, log.child({ component: 'replicas' }), holdsSourceEpochs);
    controller.onChange((records, removed) => replicas.onMetadata(records, removed));
    replicas.enableReplication(replicationView(controller), {
      lagTimeMaxMs: config.int('replica.lag.time.max.ms'),
      fetchMaxBytes: config.int('replica.fetch.max.bytes'),
      fetchResponseMaxBytes: config.int('replica.fetch.response.max.bytes'),
      fetchWaitMaxMs: config.int('replica.fetch.wait.max.ms'),
      fetchMinBytes: config.int('replica.fetch.min.bytes'),
      fetchBackoffMs: config.int('replica.fetch.backoff.ms'),
      numFetchers: config.int('num.replica.fetchers'),
      interBrokerSecurity: interBroker,
    });
    await replicas.start();

    const image = controller.image;
    const quotas = new BrokerQuotas({ version: () => image.offset, entries: () => image.quotas.values() }, config);
    const registry = new ApiRegistry();
    let listeners: BrokerListeners | null = null;
    let produceGuard: ProduceGuard | null = null;
    const autoCreates = new Map<string, Promise<number>>();
    const ctx: BrokerContext = {
      nodeId,
      clusterId: meta.clusterId,
      config,
      configs,
      controller,
      cluster,
      image: controller.image,
      log,
      registry,
      replicas,
      producerIds: new ProducerIdManager(controller),
      quotas,
      get listenerTls() {
        return listeners;
      },
      host: advertised.advertisedHost,
      interBrokerSecurity: interBroker,
      get port() {
        return listeners?.interBroker.port ?? advertised.advertisedPort;
      },
      get produceGuard() {
        return produceGuard;
      },
      set produceGuard(g) {
        produceGuard = g;
      },
      autoCreateTopic(name) {
        let p = autoCreates.get(name);
        if (!p) {
          // num.partitions may have been changed dynamically (a cluster-wide broker config).
          const partitions = Number(configs.brokerValue('num.partitions'));
          p = controller
            .createTopic(name, partitions, new Map())
            .then((r) => {
              if (r.errorCode === 0) log.info('auto-created topic', { topic: name, partitions });
              return r.errorCode;
            })
            .finally(() => autoCreates.delete(name));
          autoCreates.set(name, p);
        }
        return p;
      },
    };

    const closers: (() => Promise<void>)[] = [];
    let mirror: MirrorApiHandlers | null = null;
    registry.registerAll(brokerHandlers(ctx, () => mirror));
    registry.registerAll(saslApiHandlers());
    const coordinatorHost = createCoordinatorHost(ctx);
    const groups = await createGroupApiHandlers(coordinatorHost);
    registry.registerAll(groups.handlers);
    registry.registerAll(streamsHandlers(ctx, groups.coordinator));
    const share = createShareGroups(ctx, coordinatorHost, groups.coordinator);
    const isOtherGroup = (id: string): Promise<boolean> => groups.coordinator.groupType(id).then((t) => t !== null && t !== 'share', () => false);
    registry.registerAll(shareHandlers(ctx, share, isOtherGroup));
    wrapGroupDeletion(registry.handlers, share);
    const txns = await createTxnApiHandlers(coordinatorHost, groups.coordinator);
    registry.registerAll(txns.handlers);
    // Transactional produces and TxnOffsetCommit check their partitions with the producer's
    // transaction coordinator, here or on another node (KIP-890).
    const txnPartitions = new AddPartitionsToTxnManager(ctx, txns.coordinator);
    ctx.txnPartitions = txnPartitions;
    txns.setChannel(txnPartitions);
    const mirrorLog = log.child({ component: 'mirror' });
    mirror = await createMirrorApiHandlers(createMirrorHost(ctx, coordinatorHost), { log: (msg) => mirrorLog.info(msg), warn: (msg) => mirrorLog.warn(msg) });
    registry.registerAll(mirror.handlers);
    ctx.produceGuard = mirror;
    // The status pages read the node as the node does (Kafka's JMX sees every topic): their
    // handlers are taken before the authorizer guards the client-facing ones.
    const internalHandlers = new Map(registry.handlers);
    if (authorizer) {
      const unfollowAcls = followAcls(authorizer, controller);
      closers.push(async () => unfollowAcls());
      guardHandlers(registry.handlers, authorizer, controller, () => configs.brokerValue('auto.create.topics.enable') === 'true');
    }
    closers.push(
      () => mirror!.close(),
      async () => txnPartitions.close(),
      () => txns.close(),
      () => groups.close(),
      () => share.close(),
      async () => coordinatorHost.close(),
    );

    const observability = await Observability.start({
      listener: metricsListener,
      slowRequestMs: config.int('fjord.slow.request.ms'),
      view: {
        nodeId,
        clusterId: meta.clusterId,
        advertised: () => `${ctx.host}:${ctx.port}`,
        image: controller.image,
        log: (t, p) => replicas.getLog(t, p),
        handlers: internalHandlers,
        onMetadataChange: (l) => controller.onChange(l),
        saslMechanisms: () => listeners?.saslMechanisms ?? null,
        mayDescribeCluster: authorizer ? (principal, clientAddress) => authorizer.authorize({ principal, clientAddress }, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME) : undefined,
      },
      log: log.child({ component: 'metrics' }),
    });
    if (observability !== null) closers.unshift(() => observability.close());
    const server = await BrokerListeners.open(plan, {
      config,
      security: { scramCredential: (user, mechanism) => controller.image.scram.get(user)?.get(mechanism) },
      handlers: observability?.instrument(registry.handlers) ?? registry.handlers,
      headers: registry.headers,
      maxFrameBytes: config.int('socket.request.max.bytes'),
      idleTimeoutMs: config.int('connections.max.idle.ms'),
      maxInFlight: config.int('queued.max.requests'),
      dynamicConfig: (key) => configs.brokerValue(key),
      requestThrottleMs: (client, apiKey, nanos) => quotas.requestThrottleMs(client, apiKey, nanos),
      log: log.child({ component: 'network' }),
      unsupportedApiVersionsBody: () => registry.unsupportedApiVersionsBody(),
    });
    listeners = server;
    const etcd = quorum.etcd;
    const beforeClose = etcd && config.bool('controlled.shutdown.enable') ? () => controlledShutdown(controller, etcd, config.int('broker.session.timeout.ms'), log) : null;
    const node = new BrokerNode(ctx, server, closers, etcd, beforeClose);
    closers.push(
      async () => {
        await replicas.close();
      },
      async () => {
        duties?.close();
        await controller.close();
        await quorum.etcd?.close();
        // Written last: every log, the metadata log included, is flushed and closed.
        await logs.markCleanShutdown();
      },
    );
    log.info('node started', {
      nodeId,
      clusterId: meta.clusterId,
      listeners: server.endpoints.map((e) => `${e.name}://${e.host}:${e.port} (${e.securityProtocol})`).join(','),
      advertised: `${ctx.host}:${ctx.port}`,
      dataDir,
      topics: controller.image.topicsByName.size,
      apis: registry.handlers.size,
    });
    return node;
  }

  /** Clean shutdown; safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.beforeClose?.();
      } catch (err) {
        this.ctx.log.warn('controlled shutdown failed', { err: err instanceof Error ? err : String(err) });
      }
      await this.server.close();
      for (const c of this.closers) {
        try {
          await c();
        } catch (err) {
          this.ctx.log.error('shutdown step failed', { err: err instanceof Error ? err : String(err) });
        }
      }
    })();
    return this.closing;
  }
}
