/**
 * The read-only guard of mirror topics (KIP-1279 spec §2, the reference's
 * ReplicaManager.validateReadOnlyTopic): a client write to a topic bound to a mirror is refused
 * with READ_ONLY_TOPIC unless its partition's persisted state on this leader is STOPPED. Asked
 * for every produced partition (and by the other write paths: transaction markers, partitions
 * added to a transaction, transactional offset commits, DeleteRecords), so it reads the one
 * topic's binding and never lists topics.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S } from './mirror-partition-state.js';
import type { MirrorPartitionKey, MirrorStateMachine } from './state-machine.js';

interface ProduceGuardDeps {
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
    return this.writeError(topic, partition) === ErrorCode.NONE;
  }

  /**
   * Why a client write is refused, NONE when it is not. READ_ONLY_TOPIC while the topic is
   * mirrored; once its desired state is STOPPED but this leader has not loaded a persisted
   * STOPPED yet (the state is being read, or STOPPING is being redone), NOT_LEADER_OR_FOLLOWER:
   * the partition becomes writable on its own, so a client retries instead of failing a
   * failover's first writes.
   */
  writeError(topic: string, partition: number): number {
    const { host, machine } = this.deps;
    const b = host.mirrorTopicBinding(topic);
    if (b === undefined) return ErrorCode.NONE;
    if (b.desiredState !== S.STOPPED) return ErrorCode.READ_ONLY_TOPIC;
    const key = this.deps.keyFor(b.mirrorName, b.topicId, topic, partition);
    // Not while a transition out of STOPPED is being written: it may be persisted before this
    // leader hears so, and LOG_TRUNCATION would then cut the batch taken meanwhile. Nor until this
    // node's own state write at the leader epoch the image names has landed (its STOPPED, or its
    // claim of one it read): a STOPPED held from an earlier term, or read before another leader
    // of an epoch in between wrote, may no longer be the persisted state, and only a write at the
    // newest epoch fences every older leader's.
    if (!this.deps.isTracked(key) || machine.state(key) !== S.STOPPED || machine.isSettling(key)) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const epoch = host.leaderEpoch(topic, partition);
    if (epoch === undefined || machine.leaderEpochOf(key) < 0) return ErrorCode.NONE;
    return machine.confirmedEpochOf(key) === epoch ? ErrorCode.NONE : ErrorCode.NOT_LEADER_OR_FOLLOWER;
  }
}
