/**
 * Opens the metadata quorum a node runs on: the embedded file log of a node alone, or, with
 * `metadata.etcd.endpoints`, the etcd cluster (registration, election, the shared metadata log).
 *
 * Cluster id: the first node to reach an empty etcd prefix writes its own id there
 * (create-if-absent); every other node adopts it. A data directory formatted for another cluster
 * id is refused, as Kafka refuses a meta.properties whose cluster.id does not match.
 */
import type { BrokerConfig } from './config.js';
import type { Logger } from '../common/logger.js';
import type { ListenerPlan } from '../config/listeners.js';
import { newClusterId, type Controller, type MetadataLogStore } from '../controller/controller.js';
import { LocalClusterView, type ClusterView } from '../controller/cluster-view.js';
import { EtcdMetadataLog, type ReplicatedMetadataLogStore } from '../controller/etcd/etcd-metadata-log.js';
import { EtcdQuorum } from '../controller/etcd/etcd-quorum.js';
import { FileMetadataLog } from '../controller/metadata-log.js';
import { loadOrCreateMetaProperties, storedClusterId, type MetaProperties } from './meta-properties.js';

interface OpenedQuorum {
  readonly meta: MetaProperties;
  readonly cluster: ClusterView;
  readonly store: MetadataLogStore | ReplicatedMetadataLogStore;
  /** The etcd side, null for a node alone. */
  readonly etcd: EtcdQuorum | null;
}

export async function openQuorum(config: BrokerConfig, plan: ListenerPlan, dataDir: string, cleanShutdown: boolean, log: Logger): Promise<OpenedQuorum> {
  const nodeId = config.nodeId;
  const advertised = plan.listeners.find((l) => l.name === plan.interBrokerListener)!;
  const self = {
    nodeId,
    host: advertised.advertisedHost,
    port: advertised.advertisedPort || advertised.bindPort,
    endpoints: plan.listeners.map((l) => ({ name: l.name, host: l.advertisedHost, port: l.advertisedPort || l.bindPort, securityProtocol: l.securityProtocol })),
    rack: config.get('broker.rack') ?? null,
  };
  const endpoints = (config.get('metadata.etcd.endpoints') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  if (endpoints.length === 0) {
    const meta = loadOrCreateMetaProperties(dataDir, nodeId);
    const store = await FileMetadataLog.open(dataDir, { cleanShutdown });
    return { meta, cluster: new LocalClusterView({ ...self, incarnationId: '' }), store, etcd: null };
  }
  const prefix = (config.get('metadata.etcd.prefix') ?? '/fjord').replace(/\/+$/, '');
  const etcd = EtcdQuorum.create({
    endpoints,
    prefix,
    self,
    sessionTimeoutMs: config.int('broker.session.timeout.ms'),
    heartbeatIntervalMs: config.int('broker.heartbeat.interval.ms'),
    log: log.child({ component: 'quorum' }),
  });
  try {
    const clusterId = await etcd.adoptClusterId(storedClusterId(dataDir) ?? newClusterId());
    const meta = loadOrCreateMetaProperties(dataDir, nodeId, clusterId);
    await etcd.start();
    const store = new EtcdMetadataLog(etcd.client, `${prefix}/metadata`, () => etcd.controllerFence(), (err) => log.warn('metadata watch failed', { err: String(err) }));
    return { meta, cluster: etcd, store, etcd };
  } catch (err) {
    await etcd.close();
    throw err;
  }
}

/**
 * Tells the etcd side where the applied metadata offset is read, so that a node that registers
 * (at start, or again after it was fenced) stays fenced until its image reached the log end it
 * registered at, and reads the log again at once instead of waiting for its watch to reconnect.
 */
export function followCatchUp(quorum: OpenedQuorum, controller: Controller): void {
  const { etcd, store } = quorum;
  if (etcd === null || !(store instanceof EtcdMetadataLog)) return;
  etcd.trackMetadata(
    () => controller.image.offset,
    (cb) => controller.onChange(() => cb()),
    () => store.refollow(),
  );
}
