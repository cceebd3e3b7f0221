import { randomUUID } from 'node:crypto';
import { ClassicGroup, ClassicState } from './classic-group.js';
import type { ClassicMember, HeartbeatRequest, JoinProtocol, JoinRequest, JoinResult, LeaveMember, LeaveResult, SyncRequest, SyncResult } from './classic-group.js';
import { GroupError } from './group-errors.js';
import { groupMetadataRecord } from './group-records.js';
import type { GroupWriteContext } from './group-context.js';
import type { WriteResult } from './coordinator-runtime.js';

export type { HeartbeatRequest, JoinRequest, LeaveMember, LeaveResult, SyncRequest } from './classic-group.js';

/**
 * The classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), after Kafka's
 * `GroupMetadataManager` classic paths: member ids with MEMBER_ID_REQUIRED (JoinGroup v4+),
 * rebalance generations, the initial rebalance delay, session and rebalance timeouts, static
 * membership with group.instance.id. Each function is a write operation on the shard.
 */

const EMPTY = Buffer.alloc(0);

function joinError(errorCode: number, memberId = ''): JoinResult {
  return { errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId, members: [] };
}

function syncError(errorCode: number): SyncResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY };
}

const sessionKey = (g: string, m: string): string => `session/${g}/${m}`;
const joinKey = (g: string): string => `join/${g}`;

function sameProtocols(a: readonly JoinProtocol[], b: readonly JoinProtocol[]): boolean {
  return a.length === b.length && a.every((p, i) => p.name === b[i]!.name && p.metadata.equals(b[i]!.metadata));
}

export class ClassicOps {
  constructor(private readonly s: GroupWriteContext) {}

  private scheduleSession(g: ClassicGroup, m: ClassicMember): void {
    const groupId = g.groupId;
    const memberId = m.memberId;
    this.s.timers.schedule(sessionKey(groupId, memberId), m.sessionTimeoutMs, () => this.sessionExpired(groupId, memberId));
  }

  /** Starts session timers for members restored by replay (they must heartbeat again). */
  resumeTimers(): void {
    for (const g of this.s.classic.values()) this.resumeGroupTimers(g);
  }

  /** Session timers for a group's members, and its join timer while it rebalances (after replay, or after a revert). */
  resumeGroupTimers(g: ClassicGroup): void {
    for (const m of g.members.values()) this.scheduleSession(g, m);
    if (g.state === ClassicState.PREPARING_REBALANCE && !g.initialDelayPending) {
      const groupId = g.groupId;
      this.s.timers.schedule(joinKey(groupId), g.maxRebalanceTimeoutMs(), () => this.joinTimeout(groupId));
    }
  }

  join(req: JoinRequest): WriteResult<Promise<JoinResult>> {
    const s = this.s;
    const cfg = s.cfg;
    const done = (r: JoinResult): WriteResult<Promise<JoinResult>> => s.result(Promise.resolve(r));
    if (req.groupId === '') return done(joinError(GroupError.INVALID_GROUP_ID, req.memberId));
    if (req.sessionTimeoutMs < cfg.minSessionTimeoutMs || req.sessionTimeoutMs > cfg.maxSessionTimeoutMs) {
      return done(joinError(GroupError.INVALID_SESSION_TIMEOUT, req.memberId));
    }
    if (s.consumer.has(req.groupId)) return done(joinError(GroupError.INCONSISTENT_GROUP_PROTOCOL, req.memberId));
    let g = s.classic.get(req.groupId);
    if (!g) {
      if (req.memberId !== '') return done(joinError(GroupError.UNKNOWN_MEMBER_ID, req.memberId));
      g = new ClassicGroup(req.groupId, s.timers.now());
      s.classic.set(req.groupId, g);
    }
    if (g.state === ClassicState.DEAD) return done(joinError(GroupError.COORDINATOR_NOT_AVAILABLE, req.memberId));
    if (!g.supportsProtocols(req.protocolType, req.protocols)) return done(joinError(GroupError.INCONSISTENT_GROUP_PROTOCOL, req.memberId));
    if (req.memberId === '' && g.members.size + g.pendingMembers.size >= cfg.maxGroupSize) {
      return done(joinError(GroupError.GROUP_MAX_SIZE_REACHED));
    }
    return req.memberId === '' ? this.joinUnknownMember(g, req) : this.joinKnownMember(g, req);
  }

  private newMember(req: JoinRequest, memberId: string): ClassicMember {
    return {
      memberId,
      groupInstanceId: req.groupInstanceId,
      clientId: req.clientId,
      clientHost: req.clientHost,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      sessionTimeoutMs: req.sessionTimeoutMs,
      protocolType: req.protocolType,
      protocols: [...req.protocols],
      assignment: EMPTY,
      awaitingJoin: null,
      awaitingSync: null,
      isNew: true,
    };
  }

  private joinUnknownMember(g: ClassicGroup, req: JoinRequest): WriteResult<Promise<JoinResult>> {
    const s = this.s;
    if (req.groupInstanceId !== null) {
      const prefix = req.groupInstanceId;
      const memberId = `${prefix}-${randomUUID()}`;
      const oldId = g.staticMembers.get(req.groupInstanceId);
      if (oldId !== undefined) return this.replaceStaticMember(g, req, oldId, memberId);
      return this.addAndRebalance(g, this.newMember(req, memberId));
    }
    const memberId = `${req.clientId}-${randomUUID()}`;
    if (req.requireKnownMemberId) {
      g.pendingMembers.add(memberId);
      const groupId = g.groupId;
      // A pending member that never rejoins must not hold the rebalance forever.
      s.timers.schedule(sessionKey(groupId, memberId), req.sessionTimeoutMs, () => this.pendingExpired(groupId, memberId));
      return s.result(Promise.resolve(joinError(GroupError.MEMBER_ID_REQUIRED, memberId)));
    }
    return this.addAndRebalance(g, this.newMember(req, memberId));
  }

  private replaceStaticMember(g: ClassicGroup, req: JoinRequest, oldId: string, newId: string): WriteResult<Promise<JoinResult>> {
    const s = this.s;
    const old = g.members.get(oldId)!;
    old.awaitingJoin?.(joinError(GroupError.FENCED_INSTANCE_ID, oldId));
    old.awaitingSync?.(syncError(GroupError.FENCED_INSTANCE_ID));
    s.timers.cancel(sessionKey(g.groupId, oldId));
    const wasLeader = g.leaderId === oldId;
    g.remove(oldId);
    const m = this.newMember(req, newId);
    m.assignment = old.assignment;
    m.isNew = false;
    const unchanged = sameProtocols(old.protocols, m.protocols) || (old.protocols.length === 1 && m.protocols.some((p) => p.name === old.protocols[0]!.name));
    g.add(m);
    if (wasLeader) g.leaderId = newId;
    if (g.state === ClassicState.STABLE && unchanged) {
      // The static member comes back with the same subscription: hand it its identity and the
      // current generation without a rebalance (KIP-345); the leader must not reassign.
      this.scheduleSession(g, m);
      s.emit(groupMetadataRecord(g.groupId, g.toRecord()));
      const r: JoinResult = {
        errorCode: GroupError.NONE,
        generationId: g.generationId,
        protocolType: g.protocolType,
        protocolName: g.protocolName,
        leader: g.leaderId ?? '',
        skipAssignment: wasLeader,
        memberId: newId,
        members: wasLeader ? this.memberList(g) : [],
      };
      return s.result(Promise.resolve(r));
    }
    const p = this.awaitJoin(m);
    if (g.state === ClassicState.PREPARING_REBALANCE) this.maybeCompleteJoin(g);
    else this.prepareRebalance(g);
    return s.result(p);
  }

  private joinKnownMember(g: ClassicGroup, req: JoinRequest): WriteResult<Promise<JoinResult>> {
    const s = this.s;
    const done = (r: JoinResult): WriteResult<Promise<JoinResult>> => s.result(Promise.resolve(r));
    if (g.pendingMembers.has(req.memberId)) {
      g.pendingMembers.delete(req.memberId);
      s.timers.cancel(sessionKey(g.groupId, req.memberId));
      return this.addAndRebalance(g, this.newMember(req, req.memberId));
    }
    const m = g.members.get(req.memberId);
    if (req.groupInstanceId !== null) {
      const owner = g.staticMembers.get(req.groupInstanceId);
      if (owner !== undefined && owner !== req.memberId) return done(joinError(GroupError.FENCED_INSTANCE_ID, req.memberId));
    }
    if (!m) return done(joinError(GroupError.UNKNOWN_MEMBER_ID, req.memberId));
    const changed = !sameProtocols(m.protocols, req.protocols);
    const update = (): void => {
      m.protocols = [...req.protocols];
      m.sessionTimeoutMs = req.sessionTimeoutMs;
      m.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
      m.clientId = req.clientId;
      m.clientHost = req.clientHost;
    };
    switch (g.state) {
      case ClassicState.PREPARING_REBALANCE: {
        update();
        const p = this.awaitJoin(m);
        this.maybeCompleteJoin(g);
        return s.result(p);
      }
      case ClassicState.COMPLETING_REBALANCE:
      case ClassicState.STABLE: {
        const isLeader = g.leaderId === m.memberId;
        if (!changed && (g.state === ClassicState.COMPLETING_REBALANCE || !isLeader)) {
          // Nothing changed: answer with the current generation (the leader gets the members again).
          this.scheduleSession(g, m);
          return done(this.joinResponse(g, m));
        }
        update();
        const p = this.awaitJoin(m);
        this.prepareRebalance(g);
        return s.result(p);
      }
      default:
        return done(joinError(GroupError.UNKNOWN_MEMBER_ID, req.memberId));
    }
  }

  private awaitJoin(m: ClassicMember): Promise<JoinResult> {
    return new Promise<JoinResult>((resolve) => {
      m.awaitingJoin?.(joinError(GroupError.UNKNOWN_MEMBER_ID, m.memberId));
      m.awaitingJoin = resolve;
    });
  }

  private addAndRebalance(g: ClassicGroup, m: ClassicMember): WriteResult<Promise<JoinResult>> {
    g.add(m);
    g.newMemberAdded = true;
    const p = this.awaitJoin(m);
    if (g.state === ClassicState.PREPARING_REBALANCE) this.maybeCompleteJoin(g);
    else this.prepareRebalance(g);
    return this.s.result(p);
  }

  private memberList(g: ClassicGroup): JoinResult['members'] {
    return [...g.members.values()].map((x) => ({ memberId: x.memberId, groupInstanceId: x.groupInstanceId, metadata: g.metadataFor(x, g.protocolName) }));
  }

  private joinResponse(g: ClassicGroup, m: ClassicMember): JoinResult {
    const isLeader = g.leaderId === m.memberId;
    return {
      errorCode: GroupError.NONE,
      generationId: g.generationId,
      protocolType: g.protocolType,
      protocolName: g.protocolName,
      leader: g.leaderId ?? '',
      skipAssignment: false,
      memberId: m.memberId,
      members: isLeader ? this.memberList(g) : [],
    };
  }

  /** Moves the group to PreparingRebalance and starts the join timer (Kafka's prepareRebalance). */
  prepareRebalance(g: ClassicGroup): void {
    const s = this.s;
    const now = s.timers.now();
    if (g.state === ClassicState.COMPLETING_REBALANCE) {
      for (const m of g.members.values()) {
        m.assignment = EMPTY;
        const waiting = m.awaitingSync;
        m.awaitingSync = null;
        waiting?.(syncError(GroupError.REBALANCE_IN_PROGRESS));
      }
    }
    const initial = g.state === ClassicState.EMPTY;
    g.transition(ClassicState.PREPARING_REBALANCE, now);
    const groupId = g.groupId;
    if (initial && s.cfg.initialRebalanceDelayMs > 0) {
      // group.initial.rebalance.delay.ms: wait for more members of a starting group; each new
      // member extends the wait by the delay, up to the rebalance timeout (InitialDelayedJoin).
      g.rebalanceStartedAt = now;
      g.newMemberAdded = false;
      const delay = Math.min(s.cfg.initialRebalanceDelayMs, g.maxRebalanceTimeoutMs());
      s.timers.schedule(joinKey(groupId), delay, () => this.initialDelayExpired(groupId));
      g.initialDelayPending = true;
      return;
    }
    s.timers.schedule(joinKey(groupId), g.maxRebalanceTimeoutMs(), () => this.joinTimeout(groupId));
    this.maybeCompleteJoin(g);
  }

  private initialDelayExpired(groupId: string): WriteResult<void> {
    const s = this.s;
    const g = s.classic.get(groupId);
    if (!g || g.state !== ClassicState.PREPARING_REBALANCE) {
      if (g) g.initialDelayPending = false;
      return s.result(undefined);
    }
    const elapsed = s.timers.now() - g.rebalanceStartedAt;
    const remaining = g.maxRebalanceTimeoutMs() - elapsed;
    if (g.newMemberAdded && remaining > 0) {
      g.newMemberAdded = false;
      s.timers.schedule(joinKey(groupId), Math.min(s.cfg.initialRebalanceDelayMs, remaining), () => this.initialDelayExpired(groupId));
      return s.result(undefined);
    }
    g.initialDelayPending = false;
    this.completeJoin(g);
    return s.result(undefined);
  }

  private joinTimeout(groupId: string): WriteResult<void> {
    const g = this.s.classic.get(groupId);
    if (g && g.state === ClassicState.PREPARING_REBALANCE) this.completeJoin(g);
    return this.s.result(undefined);
  }

  maybeCompleteJoin(g: ClassicGroup): void {
    if (g.state !== ClassicState.PREPARING_REBALANCE || g.initialDelayPending) return;
    if (g.allMembersJoined()) this.completeJoin(g);
  }

  /** Ends the join phase: drops members that did not rejoin, bumps the generation, answers joins. */
  private completeJoin(g: ClassicGroup): void {
    const s = this.s;
    const now = s.timers.now();
    s.timers.cancel(joinKey(g.groupId));
    g.initialDelayPending = false;
    for (const m of [...g.members.values()]) {
      if (m.awaitingJoin === null) {
        g.remove(m.memberId);
        s.timers.cancel(sessionKey(g.groupId, m.memberId));
      }
    }
    g.generationId++;
    if (g.isEmpty()) {
      g.protocolName = null;
      g.leaderId = null;
      g.transition(ClassicState.EMPTY, now);
      s.emit(groupMetadataRecord(g.groupId, g.toRecord()));
      return;
    }
    g.protocolName = g.selectProtocol();
    if (g.leaderId === null || !g.members.has(g.leaderId)) g.leaderId = g.members.keys().next().value ?? null;
    g.transition(ClassicState.COMPLETING_REBALANCE, now);
    for (const m of g.members.values()) {
      const waiting = m.awaitingJoin;
      m.awaitingJoin = null;
      m.isNew = false;
      this.scheduleSession(g, m);
      waiting?.(this.joinResponse(g, m));
    }
  }

  private pendingExpired(groupId: string, memberId: string): WriteResult<void> {
    const g = this.s.classic.get(groupId);
    if (g?.pendingMembers.delete(memberId)) this.maybeCompleteJoin(g);
    return this.s.result(undefined);
  }

  private sessionExpired(groupId: string, memberId: string): WriteResult<void> {
    const s = this.s;
    const g = s.classic.get(groupId);
    const m = g?.members.get(memberId);
    if (g && m) {
      // A member waiting in JoinGroup is alive; the join timer decides its fate.
      if (m.awaitingJoin !== null) this.scheduleSession(g, m);
      else this.removeMember(g, m, GroupError.UNKNOWN_MEMBER_ID);
    }
    return s.result(undefined);
  }

  /** Removes a member (left, expired or fenced) and rebalances the rest. */
  removeMember(g: ClassicGroup, m: ClassicMember, errorCode: number): void {
    const s = this.s;
    const join = m.awaitingJoin;
    const sync = m.awaitingSync;
    m.awaitingJoin = null;
    m.awaitingSync = null;
    join?.(joinError(errorCode, m.memberId));
    sync?.(syncError(errorCode));
    g.remove(m.memberId);
    s.timers.cancel(sessionKey(g.groupId, m.memberId));
    if (g.state === ClassicState.STABLE || g.state === ClassicState.COMPLETING_REBALANCE) this.prepareRebalance(g);
    else if (g.state === ClassicState.PREPARING_REBALANCE) this.maybeCompleteJoin(g);
  }

  sync(req: SyncRequest): WriteResult<Promise<SyncResult>> {
    const s = this.s;
    const done = (r: SyncResult): WriteResult<Promise<SyncResult>> => s.result(Promise.resolve(r));
    const g = s.classic.get(req.groupId);
    if (!g) return done(syncError(s.consumer.has(req.groupId) ? GroupError.INCONSISTENT_GROUP_PROTOCOL : GroupError.UNKNOWN_MEMBER_ID));
    const fence = this.validateMember(g, req.memberId, req.groupInstanceId);
    if (fence !== GroupError.NONE) return done(syncError(fence));
    if (req.generationId !== g.generationId) return done(syncError(GroupError.ILLEGAL_GENERATION));
    if ((req.protocolType !== null && req.protocolType !== g.protocolType) || (req.protocolName !== null && req.protocolName !== g.protocolName)) {
      return done(syncError(GroupError.INCONSISTENT_GROUP_PROTOCOL));
    }
    const m = g.members.get(req.memberId)!;
    switch (g.state) {
      case ClassicState.PREPARING_REBALANCE:
        return done(syncError(GroupError.REBALANCE_IN_PROGRESS));
      case ClassicState.STABLE:
        this.scheduleSession(g, m);
        return done({ errorCode: GroupError.NONE, protocolType: g.protocolType, protocolName: g.protocolName, assignment: m.assignment });
      case ClassicState.COMPLETING_REBALANCE:
        break;
      default:
        return done(syncError(GroupError.UNKNOWN_MEMBER_ID));
    }
    this.scheduleSession(g, m);
    let answer!: (r: SyncResult) => void;
    const p = new Promise<SyncResult>((resolve) => {
      answer = resolve;
      m.awaitingSync = resolve;
    });
    if (g.leaderId !== m.memberId) return s.result(p);
    // The leader's assignment is persisted with the group before anyone receives it.
    // The members' assignments are set by replaying this record.
    const assigned = new Map(req.assignments.map((a) => [a.memberId, a.assignment] as const));
    const snapshot = g.toRecord();
    const generation = g.generationId;
    s.emit(groupMetadataRecord(g.groupId, { ...snapshot, members: snapshot.members.map((x) => ({ ...x, assignment: Buffer.from(assigned.get(x.memberId) ?? EMPTY) })) }));
    return {
      ...s.result(p),
      onCommitted: () => {
        if (g.state !== ClassicState.COMPLETING_REBALANCE || g.generationId !== generation) return;
        g.transition(ClassicState.STABLE, s.timers.now());
        for (const x of g.members.values()) {
          const waiting = x.awaitingSync;
          x.awaitingSync = null;
          waiting?.({ errorCode: GroupError.NONE, protocolType: g.protocolType, protocolName: g.protocolName, assignment: x.assignment });
        }
      },
      onAppendFailed: (code) => {
        // The group is back as it was before this SyncGroup; as Kafka does when storing the
        // assignment fails, everyone waiting gets the error and the group rebalances again.
        answer(syncError(code));
        const cur = s.classic.get(g.groupId);
        if (cur && cur.state === ClassicState.COMPLETING_REBALANCE && cur.generationId === generation) {
          for (const x of cur.members.values()) {
            x.assignment = EMPTY;
            const waiting = x.awaitingSync;
            x.awaitingSync = null;
            waiting?.(syncError(code));
          }
          this.prepareRebalance(cur);
        }
        return p;
      },
    };
  }

  /** NONE, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID for a member claiming (memberId, instanceId). */
  validateMember(g: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const owner = g.staticMembers.get(groupInstanceId);
      if (owner !== undefined && owner !== memberId) return GroupError.FENCED_INSTANCE_ID;
    }
    return g.members.has(memberId) ? GroupError.NONE : GroupError.UNKNOWN_MEMBER_ID;
  }

  heartbeat(req: HeartbeatRequest): WriteResult<number> {
    const s = this.s;
    const g = s.classic.get(req.groupId);
    if (!g) return s.result(s.consumer.has(req.groupId) ? GroupError.INCONSISTENT_GROUP_PROTOCOL : GroupError.UNKNOWN_MEMBER_ID);
    const fence = this.validateMember(g, req.memberId, req.groupInstanceId);
    if (fence !== GroupError.NONE) return s.result(fence);
    if (req.generationId !== g.generationId) return s.result(GroupError.ILLEGAL_GENERATION);
    const m = g.members.get(req.memberId)!;
    switch (g.state) {
      case ClassicState.PREPARING_REBALANCE:
        this.scheduleSession(g, m);
        return s.result(GroupError.REBALANCE_IN_PROGRESS);
      case ClassicState.COMPLETING_REBALANCE:
      case ClassicState.STABLE:
        this.scheduleSession(g, m);
        return s.result(GroupError.NONE);
      default:
        return s.result(GroupError.UNKNOWN_MEMBER_ID);
    }
  }

  leave(groupId: string, members: readonly LeaveMember[]): WriteResult<LeaveResult> {
    const s = this.s;
    const g = s.classic.get(groupId);
    if (!g) return s.result({ errorCode: GroupError.UNKNOWN_MEMBER_ID, members: [] });
    const out: { memberId: string; groupInstanceId: string | null; errorCode: number }[] = [];
    for (const lm of members) {
      let memberId = lm.memberId;
      let errorCode: number = GroupError.NONE;
      if (memberId === '' && lm.groupInstanceId !== null) memberId = g.staticMembers.get(lm.groupInstanceId) ?? '';
      if (g.pendingMembers.delete(memberId)) {
        s.timers.cancel(sessionKey(groupId, memberId));
        this.maybeCompleteJoin(g);
      } else {
        errorCode = this.validateMember(g, memberId, lm.groupInstanceId);
        if (errorCode === GroupError.NONE) this.removeMember(g, g.members.get(memberId)!, GroupError.UNKNOWN_MEMBER_ID);
      }
      out.push({ memberId: lm.memberId, groupInstanceId: lm.groupInstanceId, errorCode });
    }
    return s.result({ errorCode: GroupError.NONE, members: out });
  }

  /** An offset commit from a member counts as a heartbeat (Kafka reschedules the session). */
  touch(g: ClassicGroup, memberId: string): void {
    const m = g.members.get(memberId);
    if (m) this.scheduleSession(g, m);
  }
}
