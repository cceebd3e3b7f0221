import { randomBytes } from 'node:crypto';
import { debuglog } from 'node:util';
import { ConsumerGroup } from './consumer-group.js';
import type { Assignment, ConsumerGroupDescription, ConsumerMember } from './consumer-group.js';
import { currentRecord, groupEpochRecord, memberRecord, MemberState, targetEpochRecord, targetMemberRecord } from './consumer-records.js';
import { ConsumerTargets, fromKeys, tpKeys } from './consumer-target.js';
import type { TopicView } from './consumer-target.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { groupMetadataRecord } from './group-records.js';
import type { GroupWriteContext } from './group-context.js';
import type { WriteResult } from './coordinator-runtime.js';
import { topicRegexError } from './topic-regex.js';

export type { TopicView } from './consumer-target.js';

/**
 * The KIP-848 consumer protocol (ConsumerGroupHeartbeat), after Kafka's GroupMetadataManager
 * consumer paths and CurrentAssignmentBuilder: a membership or subscription change bumps the
 * group epoch; the target assignment is recomputed by the server assignor at that epoch; each
 * member then reconciles on its own heartbeats: first it revokes what its target no longer holds
 * (keeping its epoch), then it moves to the target epoch and receives the partitions no other
 * member still owns, and the rest once they are released.
 *
 * An operation never changes the persisted group itself: it works on a copy of the group, decides,
 * and emits the records (member metadata, group epoch, target assignment, current assignment)
 * whose replay is the only writer of the group, as Kafka's GroupMetadataManager builds updated
 * members and a new target assignment and leaves the group to replay. What no record carries
 * stays in memory: session and revocation timers, when the group became empty, the partitions a
 * member waits for (recomputed on each of its heartbeats) and the assignor name (derived from the
 * members, as Kafka's ConsumerGroup.preferredServerAssignor).
 */

export interface ConsumerHeartbeatRequest {
  readonly groupId: string;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly subscribedTopicNames: readonly string[] | null;
  readonly subscribedTopicRegex: string | null;
  readonly serverAssignor: string | null;
  readonly topicPartitions: readonly { topicId: string; partitions: readonly number[] }[] | null;
  readonly clientId: string;
  readonly clientHost: string;
  /** v0: the coordinator creates member ids; v1: the client does (KIP-1082). */
  readonly version: number;
}

export interface ConsumerHeartbeatResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly memberId: string | null;
  readonly memberEpoch: number;
  readonly heartbeatIntervalMs: number;
  readonly assignment: Assignment | null;
}

const debug = debuglog('fjord:coordinator');

const LEAVE_EPOCH = -1;
const STATIC_LEAVE_EPOCH = -2;

const sessionKey = (g: string, m: string): string => `csession/${g}/${m}`;
const revokeKey = (g: string, m: string): string => `crevoke/${g}/${m}`;

export class ConsumerOps {
  private readonly targets: ConsumerTargets;

  constructor(
    private readonly s: GroupWriteContext,
    private readonly topics: TopicView,
  ) {
    this.targets = new ConsumerTargets(s, topics);
  }

  /** The assignor the members prefer, shown by describe (no record carries it). */
  assignorOf(g: ConsumerGroup): string {
    return this.targets.assignorFor(g);
  }

  /** A working copy of a group for one operation; only its emitted records reach the group. */
  private working(groupId: string): ConsumerGroup | undefined {
    return this.s.consumer.get(groupId)?.clone();
  }

  resumeTimers(): void {
    for (const g of this.s.consumer.values()) this.resumeGroupTimers(g);
  }

  /** Session timers for a group's members (after replay, or after a revert). */
  resumeGroupTimers(g: ConsumerGroup): void {
    for (const m of g.members.values()) this.scheduleSession(g, m);
  }

  private scheduleSession(g: ConsumerGroup, m: ConsumerMember): void {
    const groupId = g.groupId;
    const memberId = m.memberId;
    this.s.timers.schedule(sessionKey(groupId, memberId), this.s.cfg.consumerSessionTimeoutMs, () => this.expire(groupId, memberId, 'session timeout'));
  }

  private expire(groupId: string, memberId: string, why: string): WriteResult<void> {
    debug('member %s of group %s expires: %s', memberId, groupId, why);
    const g = this.working(groupId);
    const m = g?.members.get(memberId);
    if (g && m) this.removeMember(g, m);
    return this.s.result(undefined);
  }

  private error(errorCode: number, errorMessage: string | null = null): WriteResult<ConsumerHeartbeatResult> {
    return this.s.result({ errorCode, errorMessage, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null });
  }

  heartbeat(req: ConsumerHeartbeatRequest): WriteResult<ConsumerHeartbeatResult> {
    const s = this.s;
    if (req.groupId === '') return this.error(ErrorCode.INVALID_REQUEST, 'GroupId can not be empty.');
    if (req.version >= 1 && req.memberId === '') return this.error(ErrorCode.INVALID_REQUEST, 'MemberId can not be empty.');
    if (req.memberEpoch === 0 && req.subscribedTopicNames === null && req.subscribedTopicRegex === null) {
      return this.error(ErrorCode.INVALID_REQUEST, 'SubscribedTopicNames or SubscribedTopicRegex must be set in first request.');
    }
    if (req.serverAssignor !== null && !s.cfg.consumerAssignors.includes(req.serverAssignor)) {
      return this.error(ErrorCode.UNSUPPORTED_ASSIGNOR, `ServerAssignor ${req.serverAssignor} is not supported. Supported assignors: ${s.cfg.consumerAssignors.join(', ')}.`);
    }
    if (req.subscribedTopicRegex !== null) {
      const invalid = topicRegexError(req.subscribedTopicRegex);
      if (invalid !== null) {
        return this.error(ErrorCode.INVALID_REGULAR_EXPRESSION, `SubscribedTopicRegex \`${req.subscribedTopicRegex}\` is not a valid regular expression: ${invalid}.`);
      }
    }
    const classic = s.classic.get(req.groupId);
    if ((classic && !classic.isEmpty()) || s.streams.has(req.groupId) || s.share.has(req.groupId)) return this.error(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${req.groupId} is not a consumer group.`);
    const existing = this.working(req.groupId);
    if (req.memberEpoch !== 0 && !existing) return this.error(req.memberEpoch < 0 ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID);
    // A new group exists once the replay of its first records creates it.
    const g = existing ?? new ConsumerGroup(req.groupId);
    const out = this.heartbeatOn(g, req);
    // An empty classic group (offsets only) becomes a consumer group; its offsets stay. The
    // tombstone's replay removes the classic group.
    if (out.errorCode === ErrorCode.NONE && !existing && classic) s.emit(groupMetadataRecord(req.groupId, null));
    return {
      ...s.result(out),
      onAppendFailed: (code) => ({ errorCode: code, errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null }),
    };
  }

  private heartbeatOn(g: ConsumerGroup, req: ConsumerHeartbeatRequest): ConsumerHeartbeatResult {
    const s = this.s;
    const fail = (errorCode: number, errorMessage: string | null = null): ConsumerHeartbeatResult => ({ errorCode, errorMessage, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null });
    const interval = s.cfg.consumerHeartbeatIntervalMs;

    if (req.memberEpoch === LEAVE_EPOCH || req.memberEpoch === STATIC_LEAVE_EPOCH) {
      let memberId = req.memberId;
      if (req.instanceId !== null) memberId = g.staticMembers.get(req.instanceId) ?? memberId;
      const m = g.members.get(memberId);
      if (!m) return req.instanceId !== null ? fail(ErrorCode.UNKNOWN_MEMBER_ID) : { errorCode: 0, errorMessage: null, memberId: req.memberId, memberEpoch: req.memberEpoch, heartbeatIntervalMs: 0, assignment: null };
      if (req.memberEpoch === STATIC_LEAVE_EPOCH && m.instanceId !== null) {
        // KIP-848 static leave: the member keeps its partitions for its session timeout, so the
        // same instance can come back without a rebalance.
        m.previousMemberEpoch = m.memberEpoch;
        m.memberEpoch = STATIC_LEAVE_EPOCH;
        s.emit(currentRecord(g.groupId, m, MemberState.STABLE));
        this.scheduleSession(g, m);
      } else this.removeMember(g, m);
      return { errorCode: ErrorCode.NONE, errorMessage: null, memberId: req.memberId, memberEpoch: req.memberEpoch, heartbeatIntervalMs: 0, assignment: null };
    }

    let m: ConsumerMember | undefined;
    let bump = false;
    let memberChanged = false;
    let replaced = false;
    if (req.memberEpoch === 0) {
      const memberId = req.memberId !== '' ? req.memberId : randomBytes(16).toString('base64url').slice(0, 22);
      if (req.instanceId !== null) {
        const owner = g.staticMembers.get(req.instanceId);
        if (owner !== undefined && owner !== memberId) {
          const old = g.members.get(owner);
          if (old && old.memberEpoch !== STATIC_LEAVE_EPOCH) return fail(ErrorCode.UNRELEASED_INSTANCE_ID, `Static member ${owner} with instance id ${req.instanceId} is still active.`);
          if (old) {
            this.replaceStaticMember(g, old, memberId, req);
            replaced = true;
          }
        }
      }
      m = g.members.get(memberId);
      if (!m) {
        m = {
          memberId,
          instanceId: req.instanceId,
          rackId: req.rackId,
          clientId: req.clientId,
          clientHost: req.clientHost,
          subscribedTopicNames: [],
          subscribedTopicRegex: null,
          serverAssignor: null,
          rebalanceTimeoutMs: req.rebalanceTimeoutMs,
          memberEpoch: 0,
          previousMemberEpoch: -1,
          assigned: new Map(),
          revoking: new Map(),
        };
        g.members.set(memberId, m);
        if (req.instanceId !== null) g.staticMembers.set(req.instanceId, memberId);
        bump = true;
        memberChanged = true;
      } else if (!replaced) {
        // A known member rejoining (after being fenced) starts over from nothing owned.
        m.assigned = new Map();
        m.revoking = new Map();
        m.memberEpoch = 0;
      }
    } else {
      m = g.members.get(req.memberId);
      if (!m) return fail(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${g.groupId}.`);
      if (req.memberEpoch !== m.memberEpoch) {
        const owned = req.topicPartitions === null ? null : tpKeys(new Map(req.topicPartitions.map((t) => [t.topicId, [...t.partitions]])));
        const assigned = tpKeys(m.assigned);
        const lostResponse = req.memberEpoch === m.previousMemberEpoch && owned !== null && [...owned].every((k) => assigned.has(k));
        if (!lostResponse) return fail(ErrorCode.FENCED_MEMBER_EPOCH, `The member epoch ${req.memberEpoch} does not match ${m.memberEpoch}.`);
      }
    }

    if (req.subscribedTopicNames !== null) {
      const names = [...req.subscribedTopicNames].sort();
      if (names.join('\0') !== [...m.subscribedTopicNames].sort().join('\0')) {
        m.subscribedTopicNames = names;
        bump = true;
        memberChanged = true;
      }
    }
    if (req.subscribedTopicRegex !== null && req.subscribedTopicRegex !== m.subscribedTopicRegex) {
      m.subscribedTopicRegex = req.subscribedTopicRegex === '' ? null : req.subscribedTopicRegex;
      bump = true;
      memberChanged = true;
    }
    if (req.serverAssignor !== null && req.serverAssignor !== m.serverAssignor) {
      m.serverAssignor = req.serverAssignor;
      bump = true;
      memberChanged = true;
    }
    if (req.rebalanceTimeoutMs >= 0 && req.rebalanceTimeoutMs !== m.rebalanceTimeoutMs) {
      m.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
      memberChanged = true;
    }
    if (req.rackId !== null && req.rackId !== m.rackId) {
      m.rackId = req.rackId;
      memberChanged = true;
    }
    const hash = this.targets.metadataHash(g);
    if (hash !== g.metadataHash) {
      g.metadataHash = hash;
      bump = true;
    }
    if (memberChanged) s.emit(memberRecord(g.groupId, m));
    if (bump) {
      g.groupEpoch++;
      s.emit(groupEpochRecord(g.groupId, g.groupEpoch, g.metadataHash));
    }
    if (g.assignmentEpoch < g.groupEpoch) this.targets.computeTarget(g);
    const owned = req.topicPartitions === null ? null : new Map(req.topicPartitions.map((t) => [t.topicId, [...t.partitions]]));
    const assignedBefore = JSON.stringify([...m.assigned]);
    this.reconcile(g, m, owned);
    this.scheduleSession(g, m);

    // As Kafka: the assignment goes out on a full request (a join, or a member resending all its
    // fields after an error) or when it changed; resending an unchanged one would make a client
    // reconcile it again.
    const fullRequest =
      req.memberEpoch === 0 || (req.rebalanceTimeoutMs !== -1 && (req.subscribedTopicNames !== null || req.subscribedTopicRegex !== null) && req.topicPartitions !== null);
    const sendAssignment = fullRequest || JSON.stringify([...m.assigned]) !== assignedBefore;
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      heartbeatIntervalMs: interval,
      assignment: sendAssignment ? m.assigned : null,
    };
  }

  /** A static member back after leaving with -2: the new member id takes over its partitions, no rebalance. */
  private replaceStaticMember(g: ConsumerGroup, old: ConsumerMember, memberId: string, req: ConsumerHeartbeatRequest): void {
    const s = this.s;
    s.timers.cancel(sessionKey(g.groupId, old.memberId));
    s.timers.cancel(revokeKey(g.groupId, old.memberId));
    g.members.delete(old.memberId);
    s.emit(currentRecord(g.groupId, old.memberId));
    s.emit(targetMemberRecord(g.groupId, old.memberId, null));
    s.emit(memberRecord(g.groupId, old.memberId));
    const target = g.target.get(old.memberId) ?? new Map();
    g.target.delete(old.memberId);
    const m: ConsumerMember = { ...old, memberId, clientId: req.clientId, clientHost: req.clientHost, memberEpoch: 0, previousMemberEpoch: -1 };
    g.members.set(memberId, m);
    g.staticMembers.set(old.instanceId!, memberId);
    g.target.set(memberId, target);
    s.emit(memberRecord(g.groupId, m));
    s.emit(targetMemberRecord(g.groupId, memberId, target));
  }

  /** Moves a member toward its target (Kafka's CurrentAssignmentBuilder). */
  private reconcile(g: ConsumerGroup, m: ConsumerMember, owned: Assignment | null): void {
    const s = this.s;
    // Compared with the group's member, not the working copy's: a rejoin resets the copy first.
    const persisted = s.consumer.get(g.groupId)?.members.get(m.memberId);
    const view = (x: ConsumerMember): string => JSON.stringify([x.memberEpoch, x.previousMemberEpoch, [...x.assigned], [...x.revoking]]);
    let pending: Assignment = new Map();
    if (m.revoking.size > 0) {
      // The member acknowledges a revocation by reporting owned partitions without them.
      const still = owned === null ? true : [...tpKeys(m.revoking)].some((k) => tpKeys(owned).has(k));
      if (still) {
        if (persisted === undefined || view(persisted) !== view(m)) s.emit(currentRecord(g.groupId, m, MemberState.UNREVOKED_PARTITIONS));
        return;
      }
      m.revoking = new Map();
      s.timers.cancel(revokeKey(g.groupId, m.memberId));
    }
    const target = tpKeys(g.target.get(m.memberId) ?? new Map());
    const assigned = tpKeys(m.assigned);
    const revoke = [...assigned].filter((k) => !target.has(k));
    if (revoke.length > 0) {
      m.assigned = fromKeys([...assigned].filter((k) => target.has(k)));
      m.revoking = fromKeys(revoke);
      const groupId = g.groupId;
      const memberId = m.memberId;
      const timeout = m.rebalanceTimeoutMs > 0 ? m.rebalanceTimeoutMs : s.cfg.consumerSessionTimeoutMs;
      s.timers.schedule(revokeKey(groupId, memberId), timeout, () => this.expire(groupId, memberId, 'rebalance timeout'));
    } else {
      const takenByOthers = new Set<string>();
      for (const o of g.members.values()) {
        if (o === m) continue;
        for (const k of tpKeys(o.assigned)) takenByOthers.add(k);
        for (const k of tpKeys(o.revoking)) takenByOthers.add(k);
      }
      const next = [...target].filter((k) => assigned.has(k) || !takenByOthers.has(k));
      m.assigned = fromKeys(next);
      pending = fromKeys([...target].filter((k) => !next.includes(k)));
      if (m.memberEpoch !== g.assignmentEpoch) {
        m.previousMemberEpoch = m.memberEpoch;
        m.memberEpoch = g.assignmentEpoch;
      }
    }
    const state = m.revoking.size > 0 ? MemberState.UNREVOKED_PARTITIONS : pending.size > 0 ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE;
    if (persisted === undefined || view(persisted) !== view(m)) s.emit(currentRecord(g.groupId, m, state));
  }

  /** Removes a member (left, expired, fenced): its partitions are released and the group epoch bumps. */
  removeMember(g: ConsumerGroup, m: ConsumerMember): void {
    const s = this.s;
    g.members.delete(m.memberId);
    if (m.instanceId !== null && g.staticMembers.get(m.instanceId) === m.memberId) g.staticMembers.delete(m.instanceId);
    g.target.delete(m.memberId);
    s.timers.cancel(sessionKey(g.groupId, m.memberId));
    s.timers.cancel(revokeKey(g.groupId, m.memberId));
    s.emit(currentRecord(g.groupId, m.memberId));
    s.emit(targetMemberRecord(g.groupId, m.memberId, null));
    s.emit(memberRecord(g.groupId, m.memberId));
    g.groupEpoch++;
    g.metadataHash = this.targets.metadataHash(g);
    s.emit(groupEpochRecord(g.groupId, g.groupEpoch, g.metadataHash));
    if (g.members.size === 0) {
      // In memory only (no record carries it), so it is set on the group itself.
      const live = s.consumer.get(g.groupId);
      if (live) live.emptySince = s.timers.now();
      g.assignmentEpoch = g.groupEpoch;
      s.emit(targetEpochRecord(g.groupId, g.assignmentEpoch));
    } else this.targets.computeTarget(g);
  }

  /** Every partition a member owns or is still revoking, with topic names, for describe. */
  describe(groupId: string): ConsumerGroupDescription | null {
    const g = this.s.consumer.get(groupId);
    if (!g) return null;
    const named = (a: Assignment) => [...a].map(([topicId, partitions]) => ({ topicId, topicName: this.topics.topicName(topicId) ?? '', partitions: [...partitions] }));
    return {
      groupId,
      groupState: g.state,
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      assignorName: this.targets.assignorFor(g),
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: [...m.subscribedTopicNames],
        subscribedTopicRegex: m.subscribedTopicRegex,
        assignment: named(m.assigned),
        targetAssignment: named(g.target.get(m.memberId) ?? new Map()),
      })),
    };
  }
}
