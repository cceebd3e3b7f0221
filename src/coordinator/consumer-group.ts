/**
 * The in-memory state of one KIP-848 consumer group (Kafka's `ConsumerGroup`): a group epoch
 * bumped on every membership or subscription change, a target assignment computed by a server
 * assignor at that epoch, and per member the epoch it has reconciled to, the partitions it owns
 * and the ones it must still wait for (revoked by others first).
 */
const ConsumerState = {
  EMPTY: 'Empty',
  ASSIGNING: 'Assigning',
  RECONCILING: 'Reconciling',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const;
type ConsumerState = (typeof ConsumerState)[keyof typeof ConsumerState];

/** topic id → partitions. */
export type Assignment = Map<string, number[]>;

export interface ConsumerMember {
  readonly memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  rebalanceTimeoutMs: number;
  /** The epoch the member has reconciled to. */
  memberEpoch: number;
  previousMemberEpoch: number;
  /** Partitions the member owns now. */
  assigned: Assignment;
  /** Partitions it must give up (revoking), by the epoch in which it was asked. */
  revoking: Assignment;
}

function copyAssignment(a: Assignment): Assignment {
  return new Map([...a].map(([t, p]) => [t, [...p]]));
}

export class ConsumerGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  /** Target assignment per member at assignmentEpoch. */
  readonly target = new Map<string, Assignment>();
  readonly members = new Map<string, ConsumerMember>();
  readonly staticMembers = new Map<string, string>();
  /** Hash of the subscribed topics' ids and partition counts when the target was last computed. */
  metadataHash = 0n;
  /** When the last member left (offset expiry counts from here); 0 when unknown. No record carries it: in memory only. */
  emptySince = 0;

  constructor(readonly groupId: string) {}

  /** A copy for a snapshot (assignments are copied: reconciliation replaces their arrays). */
  clone(): ConsumerGroup {
    const n = new ConsumerGroup(this.groupId);
    n.groupEpoch = this.groupEpoch;
    n.assignmentEpoch = this.assignmentEpoch;
    n.metadataHash = this.metadataHash;
    n.emptySince = this.emptySince;
    for (const [k, v] of this.target) n.target.set(k, copyAssignment(v));
    for (const [k, m] of this.members) {
      n.members.set(k, { ...m, subscribedTopicNames: [...m.subscribedTopicNames], assigned: copyAssignment(m.assigned), revoking: copyAssignment(m.revoking) });
    }
    for (const [k, v] of this.staticMembers) n.staticMembers.set(k, v);
    return n;
  }

  get state(): ConsumerState {
    if (this.members.size === 0) return ConsumerState.EMPTY;
    if (this.assignmentEpoch < this.groupEpoch) return ConsumerState.ASSIGNING;
    for (const m of this.members.values()) if (m.memberEpoch !== this.assignmentEpoch) return ConsumerState.RECONCILING;
    return ConsumerState.STABLE;
  }
}

interface NamedTopicPartitions {
  readonly topicId: string;
  readonly topicName: string;
  readonly partitions: number[];
}

export interface ConsumerGroupDescription {
  readonly groupId: string;
  readonly groupState: ConsumerState;
  readonly groupEpoch: number;
  readonly assignmentEpoch: number;
  readonly assignorName: string;
  readonly members: {
    memberId: string;
    instanceId: string | null;
    rackId: string | null;
    memberEpoch: number;
    clientId: string;
    clientHost: string;
    subscribedTopicNames: string[];
    subscribedTopicRegex: string | null;
    assignment: NamedTopicPartitions[];
    targetAssignment: NamedTopicPartitions[];
  }[];
}
