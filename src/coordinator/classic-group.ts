import type { GroupMemberMetadata, GroupMetadataValue } from './group-records.js';

/**
 * The in-memory state of one classic consumer group (Kafka's `ClassicGroup`). The group is the
 * authority while the node runs; a GroupMetadataValue snapshot is persisted when a generation's
 * assignment is stored and when the group becomes empty, and replaying it restores the group.
 */
export const ClassicState = {
  EMPTY: 'Empty',
  PREPARING_REBALANCE: 'PreparingRebalance',
  COMPLETING_REBALANCE: 'CompletingRebalance',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const;
export type ClassicState = (typeof ClassicState)[keyof typeof ClassicState];

export interface JoinProtocol {
  readonly name: string;
  readonly metadata: Buffer;
}

export interface JoinResult {
  readonly errorCode: number;
  readonly generationId: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly leader: string;
  readonly skipAssignment: boolean;
  readonly memberId: string;
  readonly members: readonly { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

export interface SyncResult {
  readonly errorCode: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignment: Buffer;
}

export interface JoinRequest {
  readonly groupId: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly protocolType: string;
  readonly protocols: readonly JoinProtocol[];
  readonly clientId: string;
  readonly clientHost: string;
  /** JoinGroup v4+: an unknown member first gets MEMBER_ID_REQUIRED with its new id. */
  readonly requireKnownMemberId: boolean;
}

export interface SyncRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignments: readonly { memberId: string; assignment: Buffer }[];
}

export interface HeartbeatRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

export interface LeaveMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

export interface LeaveResult {
  readonly errorCode: number;
  readonly members: readonly { memberId: string; groupInstanceId: string | null; errorCode: number }[];
}

export interface ClassicMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: JoinProtocol[];
  assignment: Buffer;
  /** Answers the member's pending JoinGroup once the rebalance completes. */
  awaitingJoin: ((r: JoinResult) => void) | null;
  /** Answers the member's pending SyncGroup once the leader's assignment is stored. */
  awaitingSync: ((r: SyncResult) => void) | null;
  /** Joined during the current rebalance (for the initial-delay extension). */
  isNew: boolean;
}

export class ClassicGroup {
  state: ClassicState = ClassicState.EMPTY;
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  currentStateTimestamp: number;
  readonly members = new Map<string, ClassicMember>();
  /** group.instance.id → member id, for static membership. */
  readonly staticMembers = new Map<string, string>();
  /** Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet. */
  readonly pendingMembers = new Set<string>();
  /** When the first member of the current (initial) rebalance joined. */
  rebalanceStartedAt = 0;
  newMemberAdded = false;
  /** The initial rebalance delay (group.initial.rebalance.delay.ms) is still running. */
  initialDelayPending = false;

  constructor(
    readonly groupId: string,
    now: number,
  ) {
    this.currentStateTimestamp = now;
  }

  transition(state: ClassicState, now: number): void {
    this.state = state;
    this.currentStateTimestamp = now;
  }

  isEmpty(): boolean {
    return this.members.size === 0;
  }

  add(member: ClassicMember): void {
    if (this.members.size === 0) this.protocolType = member.protocolType;
    this.members.set(member.memberId, member);
    if (member.groupInstanceId !== null) this.staticMembers.set(member.groupInstanceId, member.memberId);
    this.leaderId ??= member.memberId;
  }

  remove(memberId: string): ClassicMember | undefined {
    const m = this.members.get(memberId);
    if (!m) return undefined;
    this.members.delete(memberId);
    if (m.groupInstanceId !== null && this.staticMembers.get(m.groupInstanceId) === memberId) this.staticMembers.delete(m.groupInstanceId);
    if (this.leaderId === memberId) this.leaderId = this.members.keys().next().value ?? null;
    return m;
  }

  /** Protocols every member supports. */
  candidateProtocols(): Set<string> {
    let out: Set<string> | null = null;
    for (const m of this.members.values()) {
      const names = new Set(m.protocols.map((p) => p.name));
      if (out === null) out = names;
      else for (const n of out) if (!names.has(n)) out.delete(n);
    }
    return out ?? new Set();
  }

  /** A new member fits if its protocol type matches and it shares a protocol with everyone. */
  supportsProtocols(protocolType: string, protocols: readonly JoinProtocol[]): boolean {
    if (this.members.size === 0) return protocolType.length > 0 && protocols.length > 0;
    if (protocolType !== this.protocolType) return false;
    const candidates = this.candidateProtocols();
    return protocols.some((p) => candidates.has(p.name));
  }

  /** Each member votes for its most preferred candidate; the most voted wins (Kafka's selectProtocol). */
  selectProtocol(): string | null {
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const choice = m.protocols.find((p) => candidates.has(p.name));
      if (choice) votes.set(choice.name, (votes.get(choice.name) ?? 0) + 1);
    }
    let best: string | null = null;
    let bestVotes = -1;
    for (const [name, n] of votes) {
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    return best;
  }

  metadataFor(member: ClassicMember, protocol: string | null): Buffer {
    return member.protocols.find((p) => p.name === protocol)?.metadata ?? Buffer.alloc(0);
  }

  allMembersJoined(): boolean {
    for (const m of this.members.values()) if (m.awaitingJoin === null) return false;
    return this.pendingMembers.size === 0;
  }

  maxRebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  /** The snapshot persisted in __consumer_offsets. */
  toRecord(): GroupMetadataValue {
    const members: GroupMemberMetadata[] = [];
    for (const m of this.members.values()) {
      members.push({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs,
        sessionTimeout: m.sessionTimeoutMs,
        subscription: this.metadataFor(m, this.protocolName),
        assignment: m.assignment,
      });
    }
    return {
      protocolType: this.protocolType ?? '',
      generation: this.generationId,
      protocol: this.protocolName,
      leader: this.leaderId,
      currentStateTimestamp: this.currentStateTimestamp,
      members,
    };
  }

  /** A copy for a snapshot: members are copied, their pending join/sync answers are shared. */
  clone(): ClassicGroup {
    const g = new ClassicGroup(this.groupId, this.currentStateTimestamp);
    g.state = this.state;
    g.generationId = this.generationId;
    g.protocolType = this.protocolType;
    g.protocolName = this.protocolName;
    g.leaderId = this.leaderId;
    g.rebalanceStartedAt = this.rebalanceStartedAt;
    g.newMemberAdded = this.newMemberAdded;
    g.initialDelayPending = this.initialDelayPending;
    for (const [id, m] of this.members) g.members.set(id, { ...m, protocols: [...m.protocols] });
    for (const [k, v] of this.staticMembers) g.staticMembers.set(k, v);
    for (const id of this.pendingMembers) g.pendingMembers.add(id);
    return g;
  }

  /**
   * Replays a snapshot onto the group: generation, protocol, leader and the members with their
   * timeouts, chosen protocol's metadata and assignment come from the record, so a load that
   * replays several snapshots of one group ends with the last one's members. The rebalance
   * protocol's in-memory part (phase, waiters, each member's other protocols) stays as it is: a
   * live write builds its snapshot from the group, so there its members are already the record's.
   */
  applyRecord(v: GroupMetadataValue): void {
    this.generationId = v.generation;
    this.protocolType = v.protocolType;
    this.protocolName = v.protocol;
    if (v.currentStateTimestamp >= 0) this.currentStateTimestamp = v.currentStateTimestamp;
    const inRecord = new Set(v.members.map((rm) => rm.memberId));
    for (const id of [...this.members.keys()]) if (!inRecord.has(id)) this.remove(id);
    for (const rm of v.members) {
      const m = this.members.get(rm.memberId);
      if (!m) {
        this.add(memberFromRecord(rm, v.protocolType, v.protocol));
        continue;
      }
      m.rebalanceTimeoutMs = rm.rebalanceTimeout >= 0 ? rm.rebalanceTimeout : rm.sessionTimeout;
      m.sessionTimeoutMs = rm.sessionTimeout;
      if (v.protocol !== null) {
        const chosen = { name: v.protocol, metadata: rm.subscription };
        m.protocols = m.protocols.some((p) => p.name === v.protocol) ? m.protocols.map((p) => (p.name === v.protocol ? chosen : p)) : [chosen];
      }
      m.assignment = rm.assignment;
    }
    this.leaderId = v.leader;
    if (v.members.length === 0) this.state = ClassicState.EMPTY;
    else if (this.state === ClassicState.EMPTY) this.state = ClassicState.STABLE;
  }

  static fromRecord(groupId: string, v: GroupMetadataValue, now: number): ClassicGroup {
    const g = new ClassicGroup(groupId, v.currentStateTimestamp >= 0 ? v.currentStateTimestamp : now);
    g.generationId = v.generation;
    g.protocolName = v.protocol;
    for (const m of v.members) g.add(memberFromRecord(m, v.protocolType, v.protocol));
    g.protocolType = v.protocolType;
    g.leaderId = v.leader;
    g.state = v.members.length === 0 ? ClassicState.EMPTY : ClassicState.STABLE;
    return g;
  }
}

/** A member as its group's snapshot record holds it: only the chosen protocol's metadata. */
function memberFromRecord(m: GroupMemberMetadata, protocolType: string, protocol: string | null): ClassicMember {
  return {
    memberId: m.memberId,
    groupInstanceId: m.groupInstanceId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    rebalanceTimeoutMs: m.rebalanceTimeout >= 0 ? m.rebalanceTimeout : m.sessionTimeout,
    sessionTimeoutMs: m.sessionTimeout,
    protocolType,
    protocols: protocol === null ? [] : [{ name: protocol, metadata: m.subscription }],
    assignment: m.assignment,
    awaitingJoin: null,
    awaitingSync: null,
    isNew: false,
  };
}
