import { ClassicState } from './classic-group.js';
import type { ClassicGroup, ClassicMember, JoinResult, SyncResult } from './classic-group.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { groupMetadataRecord } from './group-records.js';
import type { GroupWriteContext } from './group-context.js';
import type { WriteResult } from './coordinator-runtime.js';

/**
 * The classic group's rebalance, after Kafka's GroupMetadataManager (prepareRebalance,
 * completeClassicGroupJoin, the InitialDelayedJoin and session/rebalance timeouts): moving a group
 * to PreparingRebalance, completing the join phase with a new generation, and removing members
 * that leave, expire or are fenced. Timer callbacks are write operations of the shard.
 */

export const EMPTY = Buffer.alloc(0);

export function joinError(errorCode: number, memberId = ''): JoinResult {
  return { errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId, members: [] };
}

export function syncError(errorCode: number): SyncResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY };
}

export const sessionKey = (g: string, m: string): string => `session/${g}/${m}`;
const joinKey = (g: string): string => `join/${g}`;

export class ClassicRebalance {
  constructor(private readonly s: GroupWriteContext) {}

  scheduleSession(g: ClassicGroup, m: ClassicMember): void {
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

  memberList(g: ClassicGroup): JoinResult['members'] {
    return [...g.members.values()].map((x) => ({ memberId: x.memberId, groupInstanceId: x.groupInstanceId, metadata: g.metadataFor(x, g.protocolName) }));
  }

  joinResponse(g: ClassicGroup, m: ClassicMember): JoinResult {
    const isLeader = g.leaderId === m.memberId;
    return {
      errorCode: ErrorCode.NONE,
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
        waiting?.(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
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

  pendingExpired(groupId: string, memberId: string): WriteResult<void> {
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
      else this.removeMember(g, m, ErrorCode.UNKNOWN_MEMBER_ID);
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

}
