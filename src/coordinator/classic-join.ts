import { randomUUID } from 'node:crypto';
import { ClassicGroup, ClassicState } from './classic-group.js';
import type { ClassicMember, JoinProtocol, JoinRequest, JoinResult } from './classic-group.js';
import { EMPTY, joinError, sessionKey, syncError } from './classic-rebalance.js';
import type { ClassicRebalance } from './classic-rebalance.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { groupMetadataRecord } from './group-records.js';
import type { GroupWriteContext } from './group-context.js';
import type { WriteResult } from './coordinator-runtime.js';

/**
 * JoinGroup for classic groups, after Kafka's GroupMetadataManager classicGroupJoin paths:
 * member ids with MEMBER_ID_REQUIRED (JoinGroup v4+), new and known members, static membership
 * with group.instance.id (KIP-345: a returning static member may keep the generation). The
 * answer is a promise settled when the join phase completes.
 */

function sameProtocols(a: readonly JoinProtocol[], b: readonly JoinProtocol[]): boolean {
  return a.length === b.length && a.every((p, i) => p.name === b[i]!.name && p.metadata.equals(b[i]!.metadata));
}

export class ClassicJoin {
  constructor(
    private readonly s: GroupWriteContext,
    private readonly r: ClassicRebalance,
  ) {}

  join(req: JoinRequest): WriteResult<Promise<JoinResult>> {
    const s = this.s;
    const cfg = s.cfg;
    const done = (r: JoinResult): WriteResult<Promise<JoinResult>> => s.result(Promise.resolve(r));
    if (req.groupId === '') return done(joinError(ErrorCode.INVALID_GROUP_ID, req.memberId));
    if (req.sessionTimeoutMs < cfg.minSessionTimeoutMs || req.sessionTimeoutMs > cfg.maxSessionTimeoutMs) {
      return done(joinError(ErrorCode.INVALID_SESSION_TIMEOUT, req.memberId));
    }
    if (s.consumer.has(req.groupId) || s.streams.has(req.groupId) || s.share.has(req.groupId)) return done(joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, req.memberId));
    let g = s.classic.get(req.groupId);
    if (!g) {
      if (req.memberId !== '') return done(joinError(ErrorCode.UNKNOWN_MEMBER_ID, req.memberId));
      g = new ClassicGroup(req.groupId, s.timers.now());
      s.classic.set(req.groupId, g);
    }
    if (g.state === ClassicState.DEAD) return done(joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, req.memberId));
    if (!g.supportsProtocols(req.protocolType, req.protocols)) return done(joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, req.memberId));
    if (req.memberId === '' && g.members.size + g.pendingMembers.size >= cfg.maxGroupSize) {
      return done(joinError(ErrorCode.GROUP_MAX_SIZE_REACHED));
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
      s.timers.schedule(sessionKey(groupId, memberId), req.sessionTimeoutMs, () => this.r.pendingExpired(groupId, memberId));
      return s.result(Promise.resolve(joinError(ErrorCode.MEMBER_ID_REQUIRED, memberId)));
    }
    return this.addAndRebalance(g, this.newMember(req, memberId));
  }

  private replaceStaticMember(g: ClassicGroup, req: JoinRequest, oldId: string, newId: string): WriteResult<Promise<JoinResult>> {
    const s = this.s;
    const old = g.members.get(oldId)!;
    old.awaitingJoin?.(joinError(ErrorCode.FENCED_INSTANCE_ID, oldId));
    old.awaitingSync?.(syncError(ErrorCode.FENCED_INSTANCE_ID));
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
      this.r.scheduleSession(g, m);
      s.emit(groupMetadataRecord(g.groupId, g.toRecord()));
      const r: JoinResult = {
        errorCode: ErrorCode.NONE,
        generationId: g.generationId,
        protocolType: g.protocolType,
        protocolName: g.protocolName,
        leader: g.leaderId ?? '',
        skipAssignment: wasLeader,
        memberId: newId,
        members: wasLeader ? this.r.memberList(g) : [],
      };
      return s.result(Promise.resolve(r));
    }
    const p = this.awaitJoin(m);
    if (g.state === ClassicState.PREPARING_REBALANCE) this.r.maybeCompleteJoin(g);
    else this.r.prepareRebalance(g);
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
      if (owner !== undefined && owner !== req.memberId) return done(joinError(ErrorCode.FENCED_INSTANCE_ID, req.memberId));
    }
    if (!m) return done(joinError(ErrorCode.UNKNOWN_MEMBER_ID, req.memberId));
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
        this.r.maybeCompleteJoin(g);
        return s.result(p);
      }
      case ClassicState.COMPLETING_REBALANCE:
      case ClassicState.STABLE: {
        const isLeader = g.leaderId === m.memberId;
        if (!changed && (g.state === ClassicState.COMPLETING_REBALANCE || !isLeader)) {
          // Nothing changed: answer with the current generation (the leader gets the members again).
          this.r.scheduleSession(g, m);
          return done(this.r.joinResponse(g, m));
        }
        update();
        const p = this.awaitJoin(m);
        this.r.prepareRebalance(g);
        return s.result(p);
      }
      default:
        return done(joinError(ErrorCode.UNKNOWN_MEMBER_ID, req.memberId));
    }
  }

  private awaitJoin(m: ClassicMember): Promise<JoinResult> {
    return new Promise<JoinResult>((resolve) => {
      m.awaitingJoin?.(joinError(ErrorCode.UNKNOWN_MEMBER_ID, m.memberId));
      m.awaitingJoin = resolve;
    });
  }

  private addAndRebalance(g: ClassicGroup, m: ClassicMember): WriteResult<Promise<JoinResult>> {
    g.add(m);
    g.newMemberAdded = true;
    const p = this.awaitJoin(m);
    if (g.state === ClassicState.PREPARING_REBALANCE) this.r.maybeCompleteJoin(g);
    else this.r.prepareRebalance(g);
    return this.s.result(p);
  }

}
