/**
 * The read-only guard of mirror topics (KIP-1279 spec §2, the reference's
 * ReplicaManager.validateReadOnlyTopic): a client write to a topic bound to a mirror is refused
 * with READ_ONLY_TOPIC unless its partition's persisted state on this leader is STOPPED. Asked
 * for every produced partition (and by the other write paths: transaction markers, partitions
 * added to a transaction, transactional offset commits, DeleteRecords), so it reads the one
 * topic's binding and never lists topics.
 */
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S } from './mirror-partition-state.js';
import type { MirrorPartitionKey, MirrorStateMachine } from './state-machine.js';

export interface ProduceGuardDeps {
  readonly host: MirrorHost;
  readonly machine: MirrorStateMachine;
  keyFor(mirrorName: string, topicId: string, topicName: string, partition: number): MirrorPartitionKey;
  isTracked(key: MirrorPartitionKey): boolean;
}

export class MirrorProduceGuard {
  constructor(private readonly deps: ProduceGuardDeps) {}

  /**
   * Client writes are allowed when the topic is not bound to a mirror, or when this leader has
   * loaded the partition's persisted state and it is STOPPED. The desired state alone is not
   * enough: a partition persisted as STOPPING (a stop that a previous leader did not finish) is
   * redone by this leader, and a client batch appended before that would take the last mirrored
   * epoch's place and could open a transaction that STOPPING's markers then abort. So until the
   * state is loaded the partition stays read-only, as the reference's guard, which reads the
   * coordinator's cache, does.
   */
  isProduceAllowed(topic: string, partition: number): boolean {
    const { host, machine } = this.deps;
    const b = host.mirrorTopicBinding(topic);
    if (b === undefined) return true;
    const key = this.deps.keyFor(b.mirrorName, b.topicId, topic, partition);
    return this.deps.isTracked(key) && machine.state(key) === S.STOPPED;
  }
}
