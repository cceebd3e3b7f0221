/**
 * The replication throttles of reassignments (Kafka's ReplicationQuotaManager, quota types
 * LeaderReplication and FollowerReplication): a cap in bytes per second on what this node sends
 * to followers (`leader.replication.throttled.rate`) and fetches as a follower
 * (`follower.replication.throttled.rate`), applied only to the partitions a topic names in
 * `leader.replication.throttled.replicas` / `follower.replication.throttled.replicas` for this
 * node, as `kafka-reassign-partitions --throttle` and `kafka-configs` set them.
 *
 * - A list is `*` (every replica of the topic) or `partition:broker` pairs; a pair counts on
 *   this node when its broker is this node (Kafka's TopicConfigHandler.parseThrottledPartitions).
 * - A replica in the ISR is never held back (Kafka's shouldLeaderThrottle /
 *   shouldFollowerThrottle): only copies being built (new replicas of a reassignment, followers
 *   that fell out) wait, so a throttle never slows acks=all writes.
 * - Every byte of a throttled partition counts against the quota, held back or not, as Kafka's
 *   KafkaApis.sizeOfThrottledPartitions and ReplicaFetcherThread record them.
 * - The rates are dynamic broker keys read on every check, so clearing them (`--verify` does)
 *   frees the copy at its next fetch.
 *
 * Concurrency contract: event loop only; the parsed lists are cached by their text.
 */
import { systemClock, type Clock } from '../common/time.js';
import { ReplicationThrottle } from '../quota/replication-throttle.js';

const LEADER_THROTTLED_REPLICAS = 'leader.replication.throttled.replicas';
const FOLLOWER_THROTTLED_REPLICAS = 'follower.replication.throttled.replicas';
const LEADER_THROTTLED_RATE = 'leader.replication.throttled.rate';
const FOLLOWER_THROTTLED_RATE = 'follower.replication.throttled.rate';

/** The partitions of a throttled-replicas list that are throttled on `brokerId`: all, or a set. */
function throttledPartitions(value: string, brokerId: number): 'all' | ReadonlySet<number> {
  const v = value.trim();
  if (v === '*') return 'all';
  const out = new Set<number>();
  if (v === '') return out;
  for (const pair of v.split(',')) {
    const [partition, broker] = pair.trim().split(':');
    if (Number(broker) === brokerId && partition !== undefined && partition !== '') out.add(Number(partition));
  }
  return out;
}

export interface ReplicationQuotaSource {
  /** A topic's own value of a key (no broker fallback: the throttled lists have none). */
  readonly topicConfig: (topic: string, key: string) => string | undefined;
  /** The broker's effective value of a key (per-node dynamic, cluster default, static, default). */
  readonly brokerValue: (key: string) => string | undefined;
}

/** One direction's quota: which partitions it covers and whether they must wait now. */
export class ReplicationQuota {
  private readonly throttle: ReplicationThrottle;
  private readonly parsed = new Map<string, { text: string; partitions: 'all' | ReadonlySet<number> }>();

  constructor(
    private readonly nodeId: number,
    private readonly source: ReplicationQuotaSource,
    private readonly replicasKey: string,
    rateKey: string,
    clock: Clock = systemClock,
  ) {
    this.throttle = new ReplicationThrottle(() => Number(source.brokerValue(rateKey) ?? Infinity), clock);
  }

  /** True when the topic lists this partition for this node (Kafka's ReplicationQuotaManager.isThrottled). */
  isThrottled(topic: string, partition: number): boolean {
    const text = this.source.topicConfig(topic, this.replicasKey) ?? '';
    if (text === '') return false;
    let entry = this.parsed.get(topic);
    if (entry === undefined || entry.text !== text) {
      entry = { text, partitions: throttledPartitions(text, this.nodeId) };
      this.parsed.set(topic, entry);
    }
    return entry.partitions === 'all' || entry.partitions.has(partition);
  }

  /** True while the bytes recorded are above the rate (Kafka's isQuotaExceeded). */
  isQuotaExceeded(): boolean {
    return this.throttle.delayMs() > 0;
  }

  /** How long until the quota has room again; 0 when it has now. */
  delayMs(): number {
    return this.throttle.delayMs();
  }

  /** Bytes of throttled partitions that were sent (leader) or fetched (follower). */
  record(bytes: number): void {
    if (bytes > 0) this.throttle.record(bytes);
  }

  /** Forgets a deleted topic's parsed list. */
  forget(topic: string): void {
    this.parsed.delete(topic);
  }
}

/** Both directions of one node. */
export interface ReplicationQuotas {
  readonly leader: ReplicationQuota;
  readonly follower: ReplicationQuota;
}

export function replicationQuotas(nodeId: number, source: ReplicationQuotaSource, clock: Clock = systemClock): ReplicationQuotas {
  return {
    leader: new ReplicationQuota(nodeId, source, LEADER_THROTTLED_REPLICAS, LEADER_THROTTLED_RATE, clock),
    follower: new ReplicationQuota(nodeId, source, FOLLOWER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_RATE, clock),
  };
}
