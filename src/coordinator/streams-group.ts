import type { StreamsGroupTopologyValueSubtopology } from '../protocol/generated/messages/streams-group-topology-value.js';

/**
 * The in-memory state of one KIP-1071 streams group (Kafka's `StreamsGroup`): a topology the
 * first member brings (subtopologies with their source, repartition and changelog topics), a
 * group epoch bumped on every membership, topology or topic-metadata change, a target task
 * assignment computed at that epoch, and per member the epoch it reconciled to, the tasks it
 * owns and the ones it must still give up.
 */
const StreamsState = {
  EMPTY: 'Empty',
  NOT_READY: 'NotReady',
  ASSIGNING: 'Assigning',
  RECONCILING: 'Reconciling',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const;
type StreamsState = (typeof StreamsState)[keyof typeof StreamsState];

/** subtopology id → partitions (task ids are (subtopology, partition)). */
export type TaskMap = Map<string, number[]>;

export interface StreamsTasks {
  active: TaskMap;
  standby: TaskMap;
  warmup: TaskMap;
}

export const emptyTasks = (): StreamsTasks => ({ active: new Map(), standby: new Map(), warmup: new Map() });

function copyMap(a: TaskMap): TaskMap {
  return new Map([...a].map(([k, v]) => [k, [...v]]));
}

export function copyTasks(t: StreamsTasks): StreamsTasks {
  return { active: copyMap(t.active), standby: copyMap(t.standby), warmup: copyMap(t.warmup) };
}

export interface StreamsTopology {
  readonly epoch: number;
  readonly subtopologies: readonly StreamsGroupTopologyValueSubtopology[];
}

interface StreamsEndpoint {
  readonly host: string;
  readonly port: number;
}

export interface StreamsMember {
  readonly memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  topologyEpoch: number;
  processId: string;
  userEndpoint: StreamsEndpoint | null;
  clientTags: { key: string; value: string }[];
  memberEpoch: number;
  previousMemberEpoch: number;
  /** 0 unrevoked tasks, 1 unreleased tasks, 2 stable (Kafka's MemberState codes in the record). */
  state: number;
  assigned: StreamsTasks;
  revoking: StreamsTasks;
}

export class StreamsGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  metadataHash = 0n;
  /** The topology epoch the configured topology was last validated at (-1: never). */
  validatedTopologyEpoch = -1;
  topology: StreamsTopology | null = null;
  /** The assignment configs the target was computed with (num.standby.replicas). */
  lastAssignmentConfigs: { key: string; value: string }[] = [];
  readonly target = new Map<string, StreamsTasks>();
  readonly members = new Map<string, StreamsMember>();
  /** When the last member left (offset expiry counts from here); in memory only. */
  emptySince = 0;

  constructor(readonly groupId: string) {}

  clone(): StreamsGroup {
    const n = new StreamsGroup(this.groupId);
    n.groupEpoch = this.groupEpoch;
    n.assignmentEpoch = this.assignmentEpoch;
    n.metadataHash = this.metadataHash;
    n.validatedTopologyEpoch = this.validatedTopologyEpoch;
    n.topology = this.topology;
    n.lastAssignmentConfigs = [...this.lastAssignmentConfigs];
    n.emptySince = this.emptySince;
    for (const [k, v] of this.target) n.target.set(k, copyTasks(v));
    for (const [k, m] of this.members) n.members.set(k, { ...m, clientTags: [...m.clientTags], assigned: copyTasks(m.assigned), revoking: copyTasks(m.revoking) });
    return n;
  }

  get state(): StreamsState {
    if (this.members.size === 0) return StreamsState.EMPTY;
    // The topology is validated (every topic there, rightly partitioned) at its current epoch.
    if (this.topology === null || this.validatedTopologyEpoch !== this.topology.epoch) return StreamsState.NOT_READY;
    if (this.assignmentEpoch < this.groupEpoch) return StreamsState.ASSIGNING;
    for (const m of this.members.values()) if (m.memberEpoch !== this.assignmentEpoch) return StreamsState.RECONCILING;
    return StreamsState.STABLE;
  }
}
