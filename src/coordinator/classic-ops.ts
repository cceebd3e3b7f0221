import type { ClassicGroup, HeartbeatRequest, JoinRequest, JoinResult, LeaveMember, LeaveResult, SyncRequest, SyncResult } from './classic-group.js';
import { ClassicState } from './classic-group.js';
import { ClassicJoin } from './classic-join.js';
import { ClassicRebalance, EMPTY, sessionKey, syncError } from './classic-rebalance.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { groupMetadataRecord } from './group-records.js';
import type { GroupWriteContext } from './group-context.js';
import type { WriteResult } from './coordinator-runtime.js';

export type { HeartbeatRequest, JoinRequest, LeaveMember, LeaveResult, SyncRequest } from './classic-group.js';

/**
 * The classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), after Kafka's
 * `GroupMetadataManager` classic paths. JoinGroup is in ClassicJoin, the rebalance and its
 * timers in ClassicRebalance; SyncGroup, Heartbeat and LeaveGroup are here. Each function is a
 * write operation on the shard.
 */
export class ClassicOps {
  readonly rebalance: ClassicRebalance;
  private readonly joins: ClassicJoin;

  constructor(private readonly s: GroupWriteContext) {
    this.rebalance = new ClassicRebalance(s);
    this.joins = new ClassicJoin(s, this.rebalance);
  }

  join(req: JoinRequest): WriteResult<Promise<JoinResult>> {
    return this.joins.join(req);
  }

  /** Starts session timers for members restored by replay (they must heartbeat again). */
  resumeTimers(): void {
    this.rebalance.resumeTimers();
  }

  resumeGroupTimers(g: ClassicGroup): void {
    this.rebalance.resumeGroupTimers(g);
  }

  sync(req: SyncRequest): WriteResult<Promise<SyncResult>> {
    const s = this.s;
    const done = (r: SyncResult): WriteResult<Promise<SyncResult>> => s.result(Promise.resolve(r));
    const g = s.classic.get(req.groupId);
    if (!g) return done(syncError(s.consumer.has(req.groupId) || s.streams.has(req.groupId) ? ErrorCode.INCONSISTENT_GROUP_PROTOCOL : ErrorCode.UNKNOWN_MEMBER_ID));
    const fence = this.validateMember(g, req.memberId, req.groupInstanceId);
    if (fence !== ErrorCode.NONE) return done(syncError(fence));
    if (req.generationId !== g.generationId) return done(syncError(ErrorCode.ILLEGAL_GENERATION));
    if ((req.protocolType !== null && req.protocolType !== g.protocolType) || (req.protocolName !== null && req.protocolName !== g.protocolName)) {
      return done(syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    }
    const m = g.members.get(req.memberId)!;
    switch (g.state) {
      case ClassicState.PREPARING_REBALANCE:
        return done(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      case ClassicState.STABLE:
        this.rebalance.scheduleSession(g, m);
        return done({ errorCode: ErrorCode.NONE, protocolType: g.protocolType, protocolName: g.protocolName, assignment: m.assignment });
      case ClassicState.COMPLETING_REBALANCE:
        break;
      default:
        return done(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    }
    this.rebalance.scheduleSession(g, m);
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
          waiting?.({ errorCode: ErrorCode.NONE, protocolType: g.protocolType, protocolName: g.protocolName, assignment: x.assignment });
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
          this.rebalance.prepareRebalance(cur);
        }
        return p;
      },
    };
  }

  /** NONE, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID for a member claiming (memberId, instanceId). */
  validateMember(g: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const owner = g.staticMembers.get(groupInstanceId);
      if (owner !== undefined && owner !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    return g.members.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  heartbeat(req: HeartbeatRequest): WriteResult<number> {
    const s = this.s;
    const g = s.classic.get(req.groupId);
    if (!g) return s.result(s.consumer.has(req.groupId) || s.streams.has(req.groupId) ? ErrorCode.INCONSISTENT_GROUP_PROTOCOL : ErrorCode.UNKNOWN_MEMBER_ID);
    const fence = this.validateMember(g, req.memberId, req.groupInstanceId);
    if (fence !== ErrorCode.NONE) return s.result(fence);
    if (req.generationId !== g.generationId) return s.result(ErrorCode.ILLEGAL_GENERATION);
    const m = g.members.get(req.memberId)!;
    switch (g.state) {
      case ClassicState.PREPARING_REBALANCE:
        this.rebalance.scheduleSession(g, m);
        return s.result(ErrorCode.REBALANCE_IN_PROGRESS);
      case ClassicState.COMPLETING_REBALANCE:
      case ClassicState.STABLE:
        this.rebalance.scheduleSession(g, m);
        return s.result(ErrorCode.NONE);
      default:
        return s.result(ErrorCode.UNKNOWN_MEMBER_ID);
    }
  }

  leave(groupId: string, members: readonly LeaveMember[]): WriteResult<LeaveResult> {
    const s = this.s;
    const g = s.classic.get(groupId);
    if (!g) return s.result({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, members: [] });
    const out: { memberId: string; groupInstanceId: string | null; errorCode: number }[] = [];
    for (const lm of members) {
      let memberId = lm.memberId;
      let errorCode: number = ErrorCode.NONE;
      if (memberId === '' && lm.groupInstanceId !== null) memberId = g.staticMembers.get(lm.groupInstanceId) ?? '';
      if (g.pendingMembers.delete(memberId)) {
        s.timers.cancel(sessionKey(groupId, memberId));
        this.rebalance.maybeCompleteJoin(g);
      } else {
        errorCode = this.validateMember(g, memberId, lm.groupInstanceId);
        if (errorCode === ErrorCode.NONE) this.rebalance.removeMember(g, g.members.get(memberId)!, ErrorCode.UNKNOWN_MEMBER_ID);
      }
      out.push({ memberId: lm.memberId, groupInstanceId: lm.groupInstanceId, errorCode });
    }
    return s.result({ errorCode: ErrorCode.NONE, members: out });
  }

  /** An offset commit from a member counts as a heartbeat (Kafka reschedules the session). */
  touch(g: ClassicGroup, memberId: string): void {
    const m = g.members.get(memberId);
    if (m) this.rebalance.scheduleSession(g, m);
  }
}
