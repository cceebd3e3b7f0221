/**
 * Broker gauges set at scrape time from state the node already holds (the metadata image, the
 * partition logs, the coordinators' answers), named as the Kafka JMX exporter names Kafka's
 * MBeans (`kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions` →
 * `kafka_server_replicamanager_underreplicatedpartitions`), plus the log flush histogram fed by
 * the `fjord:fsync` channel and the event loop's utilization.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Gauge, Histogram, type Registry } from 'prom-client';
import { CHANNEL, subscribe, type FsyncMessage } from './channels.js';
import { readCluster, readGroups, readTransactionStates } from './cluster-reads.js';
import type { NodeView } from './node-view.js';
import { partitionHealth } from './partition-health.js';

const FLUSH_BUCKETS_MS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000];

export class BrokerGauges {
  private readonly g: Record<string, Gauge<string>> = {};
  private readonly unsubscribe: () => void;
  private lastElu: EventLoopUtilization = performance.eventLoopUtilization();

  constructor(
    private readonly view: NodeView,
    register: Registry,
  ) {
    const gauge = (name: string, help: string, labelNames: string[] = []): void => {
      this.g[name] = new Gauge({ name, help, labelNames, registers: [register] });
    };
    gauge('kafka_server_replicamanager_partitioncount', 'Partitions with a replica on this node.');
    gauge('kafka_server_replicamanager_leadercount', 'Partitions led by this node.');
    gauge('kafka_server_replicamanager_underreplicatedpartitions', 'Partitions led here whose ISR is smaller than their replica set.');
    gauge('kafka_server_replicamanager_underminisrpartitioncount', 'Partitions led here whose ISR is smaller than min.insync.replicas.');
    gauge('kafka_server_replicamanager_atminisrpartitioncount', 'Partitions led here whose ISR is exactly min.insync.replicas: one more lost replica refuses acks=all produces.');
    gauge('kafka_controller_kafkacontroller_offlinepartitionscount', 'Partitions without a leader.');
    gauge('kafka_controller_kafkacontroller_activecontrollercount', '1 on the node that is the active controller.');
    gauge('kafka_controller_kafkacontroller_globaltopiccount', 'Topics in the cluster.');
    gauge('kafka_controller_kafkacontroller_globalpartitioncount', 'Partitions in the cluster.');
    gauge('kafka_server_kafkaserver_brokerstate', 'Broker state as Kafka numbers it (3 = RUNNING).');
    gauge('kafka_log_log_size', 'Bytes of all segment files of a partition hosted here.', ['topic', 'partition']);
    gauge('kafka_log_log_numlogsegments', 'Segments of a partition hosted here.', ['topic', 'partition']);
    gauge('kafka_log_log_logendoffset', 'Log end offset of a partition hosted here.', ['topic', 'partition']);
    gauge('kafka_log_log_logstartoffset', 'Log start offset of a partition hosted here.', ['topic', 'partition']);
    gauge('kafka_cluster_partition_highwatermark', 'High watermark of a partition hosted here.', ['topic', 'partition']);
    gauge('kafka_coordinator_group_groupmetadatamanager_numgroups', 'Consumer groups known to the group coordinator.');
    gauge('kafka_coordinator_group_groupmetadatamanager_numoffsets', 'Committed offsets held by the group coordinator.');
    gauge('fjord_group_coordinator_groups', 'Consumer groups by state and type.', ['state', 'type']);
    gauge('kafka_consumergroup_lag', 'Records between a group’s committed offset and the high watermark.', ['consumergroup', 'topic', 'partition']);
    gauge('fjord_transaction_coordinator_transactional_ids', 'Transactional ids known to the transaction coordinator, by state.', ['state']);
    gauge('nodejs_eventloop_utilization', 'Fraction of time the event loop was busy since the previous scrape.');
    gauge(
      'kafka_network_socketserver_networkprocessoravgidlepercent',
      'Idle fraction (0-1) since the previous scrape of the one event loop that does the work of Kafka’s network processors and request handlers (1 - event loop utilization).',
    );
    const flush = new Histogram({
      name: 'kafka_log_logflushstats_logflushrateandtimems',
      help: 'Milliseconds per log fsync (Kafka LogFlushStats LogFlushRateAndTimeMs).',
      buckets: FLUSH_BUCKETS_MS,
      registers: [register],
    });
    this.unsubscribe = subscribe<FsyncMessage>(CHANNEL.fsync, (m) => flush.observe(m.durationMs));
  }

  private set(name: string, value: number, labels?: Record<string, string>): void {
    const g = this.g[name]!;
    if (labels === undefined) g.set(value);
    else g.set(labels, value);
  }

  /** Recomputes every gauge; labelled series of partitions and groups that went away disappear. */
  async refresh(): Promise<void> {
    for (const g of Object.values(this.g)) g.reset();
    const { image, nodeId } = this.view;
    for (const t of image.topicsByName.values()) {
      for (const p of t.partitions) {
        const log = this.view.log(t.name, p.partition);
        if (log === undefined) continue;
        const labels = { topic: t.name, partition: String(p.partition) };
        this.set('kafka_log_log_size', log.size, labels);
        this.set('kafka_log_log_numlogsegments', log.segmentCount, labels);
        this.set('kafka_log_log_logendoffset', log.logEndOffset, labels);
        this.set('kafka_log_log_logstartoffset', log.logStartOffset, labels);
        this.set('kafka_cluster_partition_highwatermark', log.highWatermark, labels);
      }
    }
    const health = partitionHealth(image, nodeId);
    this.set('kafka_server_replicamanager_partitioncount', health.hosted);
    this.set('kafka_server_replicamanager_leadercount', health.leaders);
    this.set('kafka_server_replicamanager_underreplicatedpartitions', health.underReplicated);
    this.set('kafka_server_replicamanager_underminisrpartitioncount', health.underMinIsr);
    this.set('kafka_server_replicamanager_atminisrpartitioncount', health.atMinIsr);
    this.set('kafka_controller_kafkacontroller_offlinepartitionscount', health.offline);
    this.set('kafka_controller_kafkacontroller_globaltopiccount', image.topicsByName.size);
    this.set('kafka_controller_kafkacontroller_globalpartitioncount', health.partitions);
    this.set('kafka_server_kafkaserver_brokerstate', 3);

    const cluster = await readCluster(this.view);
    this.set('kafka_controller_kafkacontroller_activecontrollercount', cluster.controllerId === nodeId ? 1 : 0);
    const groups = await readGroups(this.view);
    this.set('kafka_coordinator_group_groupmetadatamanager_numgroups', groups.length);
    let offsets = 0;
    for (const grp of groups) {
      const labels = { state: grp.state, type: grp.type };
      this.g['fjord_group_coordinator_groups']!.inc(labels);
      for (const p of grp.partitions) {
        offsets++;
        if (p.lag >= 0) this.set('kafka_consumergroup_lag', p.lag, { consumergroup: grp.groupId, topic: p.topic, partition: String(p.partition) });
      }
    }
    this.set('kafka_coordinator_group_groupmetadatamanager_numoffsets', offsets);
    for (const [state, n] of await readTransactionStates(this.view)) this.set('fjord_transaction_coordinator_transactional_ids', n, { state });

    const elu = performance.eventLoopUtilization(this.lastElu);
    this.lastElu = performance.eventLoopUtilization();
    this.set('nodejs_eventloop_utilization', elu.utilization);
    this.set('kafka_network_socketserver_networkprocessoravgidlepercent', 1 - elu.utilization);
  }

  close(): void {
    this.unsubscribe();
  }
}
