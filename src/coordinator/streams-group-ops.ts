import { debuglog } from 'node:util';
import type { StreamsGroupHeartbeatRequest } from '../protocol/generated/messages/streams-group-heartbeat-request.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { WriteResult } from './coordinator-runtime.js';
import type { TopicView } from './consumer-target.js';
import type { GroupWriteContext } from './group-context.js';
import { groupMetadataRecord } from './group-records.js';
import { StreamsGroup, copyTasks, emptyTasks } from './streams-group.js';
import type { StreamsMember, StreamsTasks, TaskMap } from './streams-group.js';
import { assignStreamsTasks } from './streams-group-assignor.js';
import {
  emptyStreamsMember,
  streamsCurrentRecord,
  streamsGroupRecord,
  streamsMemberRecord,
  streamsTargetEpochRecord,
  streamsTargetMemberRecord,
  topologyRecord,
} from './streams-group-records.js';
import { StreamsStatus, configureTopology, topologyError } from './streams-group-topology.js';
import type { InternalTopicToCreate, StreamsStatusEntry } from './streams-group-topology.js';

/**
 * The KIP-1071 streams rebalance protocol (StreamsGroupHeartbeat), after Kafka's
 * GroupMetadataManager.streamsGroupHeartbeat and the streams CurrentAssignmentBuilder: the first
 * member's topology becomes the group's; the topology is configured against the topic metadata
 * (missing source topics, internal topics to create, partition counts); a membership, topology,
 * metadata or assignment-config change bumps the group epoch and the sticky task assignor
 * computes the target at that epoch; each member then revokes the tasks its target no longer
 * holds (keeping its epoch), moves to the target epoch, and receives the active tasks no other
 * member still owns, the rest once they are released.
 *
 * As for consumer groups, an operation works on a copy of the group and emits the records whose
 * replay is the only writer of the group. Session and revocation timers, the
 * endpoint-information epoch and a requested application shutdown live in memory.
 */

export interface StreamsHeartbeatRequest extends StreamsGroupHeartbeatRequest {
  readonly clientId: string;
  readonly clientHost: string;
  readonly version: number;
}

export interface StreamsHeartbeatResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly heartbeatIntervalMs: number;
  readonly status: readonly StreamsStatusEntry[] | null;
  readonly tasks: StreamsTasks | null;
  readonly endpointInformationEpoch: number;
  readonly partitionsByUserEndpoint: { userEndpoint: { host: string; port: number }; activePartitions: { topic: string; partitions: number[] }[]; standbyPartitions: { topic: string; partitions: number[] }[] }[] | null;
  /** Internal topics the broker must create (not part of the response). */
  readonly toCreate: readonly InternalTopicToCreate[];
}

/** Group configs a streams group reads (per group, defaulting to the group.streams.* broker keys). */
export type StreamsGroupConfig = (groupId: string, key: 'streams.session.timeout.ms' | 'streams.heartbeat.interval.ms' | 'streams.num.standby.replicas') => number;

const debug = debuglog('fjord:coordinator');

const LEAVE_EPOCH = -1;
const STATIC_LEAVE_EPOCH = -2;
const MemberState = { UNREVOKED_TASKS: 0, UNRELEASED_TASKS: 1, STABLE: 2 } as const;

const sessionKey = (g: string, m: string): string => `ssession/${g}/${m}`;
const revokeKey = (g: string, m: string): string => `srevoke/${g}/${m}`;

type Kind = keyof StreamsTasks;
const KINDS: readonly Kind[] = ['active', 'standby', 'warmup'];

function taskKeys(t: TaskMap): Set<string> {
  const s = new Set<string>();
  for (const [id, ps] of t) for (const p of ps) s.add(`${id}\0${p}`);
  return s;
}

function fromKeys(keys: Iterable<string>): TaskMap {
  const out: TaskMap = new Map();
  for (const k of keys) {
    const i = k.lastIndexOf('\0');
    const id = k.slice(0, i);
    const p = Number(k.slice(i + 1));
    const l = out.get(id);
    if (l) l.push(p);
    else out.set(id, [p]);
  }
  for (const l of out.values()) l.sort((a, b) => a - b);
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const minus = (a: TaskMap, b: TaskMap): TaskMap => {
  const bk = taskKeys(b);
  return fromKeys([...taskKeys(a)].filter((k) => !bk.has(k)));
};
const intersect = (a: TaskMap, b: TaskMap): TaskMap => {
  const bk = taskKeys(b);
  return fromKeys([...taskKeys(a)].filter((k) => bk.has(k)));
};
const isEmpty = (t: StreamsTasks): boolean => KINDS.every((k) => t[k].size === 0);
const tasksView = (t: StreamsTasks): string => JSON.stringify(KINDS.map((k) => [...fromKeys(taskKeys(t[k]))]));
const fromRequest = (l: readonly { subtopologyId: string; partitions: readonly number[] }[]): TaskMap => fromKeys(l.flatMap((t) => t.partitions.map((p) => `${t.subtopologyId}\0${p}`)));

/** What no record carries (Kafka's StreamsGroup keeps it in memory too). */
interface StreamsVolatile {
  /** Bumped whenever the tasks of members with a user endpoint change. */
  endpointEpoch: number;
  /** A member asked for the whole application to shut down (ShutdownApplication). */
  shutdownRequestedBy: string | null;
}

export class StreamsOps {
  private readonly volatile = new Map<string, StreamsVolatile>();

  private volatileOf(groupId: string): StreamsVolatile {
    let v = this.volatile.get(groupId);
    if (!v) this.volatile.set(groupId, (v = { endpointEpoch: 0, shutdownRequestedBy: null }));
    return v;
  }

  constructor(
    private readonly s: GroupWriteContext,
    private readonly topics: TopicView,
    private readonly config: StreamsGroupConfig,
  ) {}

  private working(groupId: string): StreamsGroup | undefined {
    return this.s.streams.get(groupId)?.clone();
  }

  resumeTimers(): void {
    for (const g of this.s.streams.values()) this.resumeGroupTimers(g);
  }

  resumeGroupTimers(g: StreamsGroup): void {
    for (const m of g.members.values()) this.scheduleSession(g.groupId, m.memberId);
  }

  private scheduleSession(groupId: string, memberId: string): void {
    this.s.timers.schedule(sessionKey(groupId, memberId), this.config(groupId, 'streams.session.timeout.ms'), () => this.expire(groupId, memberId, 'session timeout'));
  }

  private expire(groupId: string, memberId: string, why: string): WriteResult<void> {
    debug('streams member %s of group %s expires: %s', memberId, groupId, why);
    const g = this.working(groupId);
    const m = g?.members.get(memberId);
    if (g && m) this.removeMember(g, m);
    return this.s.result(undefined);
  }

  private fail(errorCode: number, errorMessage: string | null, req: { memberId: string }): WriteResult<StreamsHeartbeatResult> {
    return this.s.result(this.failure(errorCode, errorMessage, req.memberId));
  }

  private failure(errorCode: number, errorMessage: string | null, memberId: string): StreamsHeartbeatResult {
    return { errorCode, errorMessage, memberId, memberEpoch: -1, heartbeatIntervalMs: 0, status: null, tasks: null, endpointInformationEpoch: 0, partitionsByUserEndpoint: null, toCreate: [] };
  }

  /** Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid. */
  private invalid(req: StreamsHeartbeatRequest): string | null {
    if (req.groupId === '') return "GroupId can't be empty.";
    if (req.memberId === '') return "MemberId can't be empty.";
    if (req.instanceId !== null) return 'Static membership is not yet supported.';
    if (req.memberEpoch < STATIC_LEAVE_EPOCH) return `MemberEpoch is ${req.memberEpoch}, but must be greater than or equal to -2.`;
    if (req.memberEpoch === 0) {
      if (req.rebalanceTimeoutMs === -1) return 'RebalanceTimeoutMs must be provided in first request.';
      if (req.topology === null) return 'Topology must be non-null when (re-)joining.';
      if (req.activeTasks === null || req.activeTasks.length > 0) return 'ActiveTasks must be empty when (re-)joining.';
      if (req.standbyTasks === null || req.standbyTasks.length > 0) return 'StandbyTasks must be empty when (re-)joining.';
      if (req.warmupTasks === null || req.warmupTasks.length > 0) return 'WarmupTasks must be empty when (re-)joining.';
      if (req.processId === null || req.processId === '') return "ProcessId can't be empty.";
    }
    return null;
  }

  heartbeat(req: StreamsHeartbeatRequest): WriteResult<StreamsHeartbeatResult> {
    const s = this.s;
    const bad = this.invalid(req);
    if (bad !== null) return this.fail(ErrorCode.INVALID_REQUEST, bad, req);
    if (req.topology !== null) {
      const t = topologyError(req.topology);
      if (t !== null) return this.fail(ErrorCode.STREAMS_INVALID_TOPOLOGY, t, req);
    }
    const classic = s.classic.get(req.groupId);
    if (s.consumer.has(req.groupId) || s.share.has(req.groupId) || (classic && !classic.isEmpty())) return this.fail(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${req.groupId} is not a streams group.`, req);
    const existing = this.working(req.groupId);
    if (req.memberEpoch !== 0 && !existing) return this.fail(ErrorCode.GROUP_ID_NOT_FOUND, `Streams group ${req.groupId} not found.`, req);
    const g = existing ?? new StreamsGroup(req.groupId);
    const out = this.heartbeatOn(g, req);
    // An empty classic group (offsets only) becomes a streams group; its offsets stay. The
    // tombstone's replay removes the classic group.
    if (out.errorCode === ErrorCode.NONE && !existing && classic) s.emit(groupMetadataRecord(req.groupId, null));
    return { ...s.result(out), onAppendFailed: (code) => this.failure(code, null, req.memberId) };
  }

  private heartbeatOn(g: StreamsGroup, req: StreamsHeartbeatRequest): StreamsHeartbeatResult {
    const s = this.s;
    if (req.memberEpoch === LEAVE_EPOCH || req.memberEpoch === STATIC_LEAVE_EPOCH) {
      const m = g.members.get(req.memberId);
      if (!m) return this.failure(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${g.groupId}.`, req.memberId);
      this.removeMember(g, m);
      return { ...this.failure(ErrorCode.NONE, null, req.memberId), memberEpoch: req.memberEpoch };
    }

    let bump = false;
    let memberChanged = false;
    let m = g.members.get(req.memberId);
    if (req.memberEpoch === 0) {
      if (!m) {
        m = { ...emptyStreamsMember(req.memberId), clientId: req.clientId, clientHost: req.clientHost, rebalanceTimeoutMs: req.rebalanceTimeoutMs };
        g.members.set(m.memberId, m);
        bump = true;
        memberChanged = true;
      } else {
        // A known member rejoining (after being fenced) starts over from nothing owned.
        m.assigned = emptyTasks();
        m.revoking = emptyTasks();
        m.memberEpoch = 0;
      }
    } else {
      if (!m) return this.failure(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${g.groupId}.`, req.memberId);
      if (req.memberEpoch !== m.memberEpoch) {
        const reported = req.activeTasks === null ? null : taskKeys(fromRequest(req.activeTasks));
        const assigned = taskKeys(m.assigned.active);
        const lostResponse = req.memberEpoch === m.previousMemberEpoch && reported !== null && [...reported].every((k) => assigned.has(k));
        if (!lostResponse) return this.failure(ErrorCode.FENCED_MEMBER_EPOCH, `The streams group member has a smaller member epoch (${req.memberEpoch}) than the one known by the group coordinator (${m.memberEpoch}). The member must abandon all its partitions and rejoin.`, req.memberId);
      }
    }

    // The topology: the first member's becomes the group's; an empty group takes a new one.
    if (req.topology !== null) {
      const t = { epoch: req.topology.epoch, subtopologies: req.topology.subtopologies };
      if (g.topology === null || (g.topology.epoch !== t.epoch && g.members.size === 1 && g.members.has(m.memberId))) {
        g.topology = t;
        s.emit(topologyRecord(g.groupId, t));
        bump = true;
      } else if (t.epoch > g.topology.epoch) {
        return this.failure(ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH, `Topology epoch ${t.epoch} is newer than the group's topology epoch ${g.topology.epoch}; topology updates are not supported yet.`, req.memberId);
      }
      if (t.epoch !== m.topologyEpoch) {
        m.topologyEpoch = t.epoch;
        memberChanged = true;
      }
    }
    const set = <K extends keyof StreamsMember>(k: K, v: StreamsMember[K], bumps: boolean): void => {
      if (JSON.stringify(m![k]) === JSON.stringify(v)) return;
      m![k] = v;
      memberChanged = true;
      if (bumps) bump = true;
    };
    if (req.processId !== null) set('processId', req.processId, true);
    if (req.rackId !== null) set('rackId', req.rackId, true);
    if (req.rebalanceTimeoutMs >= 0) set('rebalanceTimeoutMs', req.rebalanceTimeoutMs, false);
    if (req.userEndpoint !== null) set('userEndpoint', { host: req.userEndpoint.host, port: req.userEndpoint.port }, false);
    if (req.clientTags !== null) set('clientTags', req.clientTags.map((t) => ({ key: t.key, value: t.value })), true);
    if (memberChanged) s.emit(streamsMemberRecord(g.groupId, m));

    const topology = g.topology!;
    const configured = configureTopology(topology, this.topics);
    if (configured.metadataHash !== g.metadataHash) {
      g.metadataHash = configured.metadataHash;
      bump = true;
    }
    const validated = configured.ready ? topology.epoch : -1;
    if (validated !== g.validatedTopologyEpoch) {
      g.validatedTopologyEpoch = validated;
      bump = true;
    }
    const standbys = this.config(g.groupId, 'streams.num.standby.replicas');
    const configs = [{ key: 'num.standby.replicas', value: String(standbys) }];
    if (JSON.stringify(configs) !== JSON.stringify(g.lastAssignmentConfigs)) {
      g.lastAssignmentConfigs = configs;
      bump = true;
    }
    if (bump) {
      g.groupEpoch++;
      s.emit(streamsGroupRecord(g));
    }
    if (g.assignmentEpoch < g.groupEpoch) this.computeTarget(g, configured.ready ? configured.tasks : new Map(), standbys);

    const persisted = s.streams.get(g.groupId)?.members.get(m.memberId);
    const before = persisted ? tasksView(persisted.assigned) : '';
    const owned = req.activeTasks === null ? null : { active: fromRequest(req.activeTasks), standby: fromRequest(req.standbyTasks ?? []), warmup: fromRequest(req.warmupTasks ?? []) };
    this.reconcile(g, m, owned);
    this.scheduleSession(g.groupId, m.memberId);

    const status: StreamsStatusEntry[] = [...configured.status];
    if (m.topologyEpoch < topology.epoch) status.unshift({ statusCode: StreamsStatus.STALE_TOPOLOGY, statusDetail: `The member's topology epoch ${m.topologyEpoch} is behind the group's topology epoch ${topology.epoch}.` });
    // ShutdownApplication: every member hears SHUTDOWN_APPLICATION until the group is empty.
    const vol = this.volatileOf(g.groupId);
    if (req.shutdownApplication && vol.shutdownRequestedBy === null) vol.shutdownRequestedBy = m.memberId;
    if (vol.shutdownRequestedBy !== null) {
      status.push({ statusCode: StreamsStatus.SHUTDOWN_APPLICATION, statusDetail: `Streams group member ${vol.shutdownRequestedBy} encountered a fatal error and requested a shutdown for the entire application.` });
    }
    const changed = tasksView(m.assigned) !== before;
    const ownedDiffers = owned !== null && tasksView(owned) !== tasksView(m.assigned);
    const sendTasks = req.memberEpoch === 0 || changed || ownedDiffers;
    if (changed && [...g.members.values()].some((x) => x.userEndpoint !== null)) vol.endpointEpoch++;
    const endpoints = req.endpointInformationEpoch !== vol.endpointEpoch ? this.endpoints(g) : null;
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      heartbeatIntervalMs: this.config(g.groupId, 'streams.heartbeat.interval.ms'),
      status,
      tasks: sendTasks ? m.assigned : null,
      endpointInformationEpoch: vol.endpointEpoch,
      partitionsByUserEndpoint: endpoints,
      toCreate: configured.toCreate,
    };
  }

  /** Which partitions each member with a user endpoint serves (interactive queries, KIP-1071). */
  private endpoints(g: StreamsGroup): StreamsHeartbeatResult['partitionsByUserEndpoint'] {
    const withEndpoint = [...g.members.values()].filter((x) => x.userEndpoint !== null);
    if (withEndpoint.length === 0) return null;
    const topicsOf = (tasks: TaskMap): { topic: string; partitions: number[] }[] => {
      const byTopic = new Map<string, Set<number>>();
      for (const [id, ps] of tasks) {
        const sub = g.topology?.subtopologies.find((x) => x.subtopologyId === id);
        if (!sub) continue;
        for (const t of [...sub.sourceTopics, ...sub.repartitionSourceTopics.map((r) => r.name)]) {
          const set = byTopic.get(t) ?? new Set<number>();
          for (const p of ps) if (p < (this.topics.partitionCount(t) ?? 0)) set.add(p);
          byTopic.set(t, set);
        }
      }
      return [...byTopic].map(([topic, ps]) => ({ topic, partitions: [...ps].sort((a, b) => a - b) }));
    };
    return withEndpoint.map((x) => ({ userEndpoint: x.userEndpoint!, activePartitions: topicsOf(x.assigned.active), standbyPartitions: topicsOf(x.assigned.standby) }));
  }

  private computeTarget(g: StreamsGroup, tasks: ReadonlyMap<string, number>, standbys: number): void {
    const s = this.s;
    const members = [...g.members.values()].map((m) => ({ memberId: m.memberId, processId: m.processId, previous: g.target.get(m.memberId) ?? emptyTasks() }));
    const target = assignStreamsTasks(members, tasks, standbys);
    for (const [memberId, t] of target) {
      const prev = g.target.get(memberId);
      if (!prev || tasksView(prev) !== tasksView(t)) s.emit(streamsTargetMemberRecord(g.groupId, memberId, t));
      g.target.set(memberId, t);
    }
    for (const memberId of [...g.target.keys()]) if (!g.members.has(memberId)) g.target.delete(memberId);
    g.assignmentEpoch = g.groupEpoch;
    s.emit(streamsTargetEpochRecord(g.groupId, g.assignmentEpoch, s.timers.now()));
  }

  /** Moves a member toward its target (Kafka's streams CurrentAssignmentBuilder). */
  private reconcile(g: StreamsGroup, m: StreamsMember, owned: StreamsTasks | null): void {
    const s = this.s;
    const persisted = s.streams.get(g.groupId)?.members.get(m.memberId);
    const view = (x: StreamsMember): string => JSON.stringify([x.memberEpoch, x.previousMemberEpoch, x.state, tasksView(x.assigned), tasksView(x.revoking)]);
    const target = g.target.get(m.memberId) ?? emptyTasks();

    if (!isEmpty(m.revoking)) {
      // Waiting for revocations: done once the member no longer reports any revoked task.
      const stillOwned = owned === null || KINDS.some((k) => intersect(owned[k], m.revoking[k]).size > 0);
      if (stillOwned) {
        if (!persisted || view(persisted) !== view(m)) s.emit(streamsCurrentRecord(g.groupId, m));
        return;
      }
      m.revoking = emptyTasks();
      s.timers.cancel(revokeKey(g.groupId, m.memberId));
    }
    if (m.memberEpoch !== g.assignmentEpoch || m.state !== MemberState.STABLE) {
      const revoke: StreamsTasks = { active: minus(m.assigned.active, target.active), standby: minus(m.assigned.standby, target.standby), warmup: minus(m.assigned.warmup, target.warmup) };
      if (!isEmpty(revoke)) {
        m.assigned = { active: intersect(m.assigned.active, target.active), standby: intersect(m.assigned.standby, target.standby), warmup: intersect(m.assigned.warmup, target.warmup) };
        m.revoking = revoke;
        m.state = MemberState.UNREVOKED_TASKS;
        const groupId = g.groupId;
        const memberId = m.memberId;
        s.timers.schedule(revokeKey(groupId, memberId), Math.max(1, m.rebalanceTimeoutMs), () => this.expire(groupId, memberId, 'tasks not revoked within the rebalance timeout'));
      } else {
        // Active tasks another member still owns (or is revoking) are withheld until released.
        const ownedByOthers = new Set<string>();
        for (const o of g.members.values()) {
          if (o.memberId === m.memberId) continue;
          for (const k of taskKeys(o.assigned.active)) ownedByOthers.add(k);
          for (const k of taskKeys(o.revoking.active)) ownedByOthers.add(k);
        }
        const active = [...taskKeys(target.active)].filter((k) => !ownedByOthers.has(k));
        if (m.memberEpoch !== g.assignmentEpoch) m.previousMemberEpoch = m.memberEpoch;
        m.memberEpoch = g.assignmentEpoch;
        m.assigned = { active: fromKeys(active), standby: fromKeys(taskKeys(target.standby)), warmup: fromKeys(taskKeys(target.warmup)) };
        m.state = active.length < taskKeys(target.active).size ? MemberState.UNRELEASED_TASKS : MemberState.STABLE;
      }
    }
    if (!persisted || view(persisted) !== view(m)) s.emit(streamsCurrentRecord(g.groupId, m));
  }

  private removeMember(g: StreamsGroup, m: StreamsMember): void {
    const s = this.s;
    s.timers.cancel(sessionKey(g.groupId, m.memberId));
    s.timers.cancel(revokeKey(g.groupId, m.memberId));
    s.emit(streamsCurrentRecord(g.groupId, m.memberId));
    if (g.target.has(m.memberId)) s.emit(streamsTargetMemberRecord(g.groupId, m.memberId, null));
    s.emit(streamsMemberRecord(g.groupId, m.memberId));
    g.members.delete(m.memberId);
    g.target.delete(m.memberId);
    g.groupEpoch++;
    s.emit(streamsGroupRecord(g));
    if (g.members.size === 0) {
      // In memory only (no record carries it), so it is set on the group itself.
      const live = s.streams.get(g.groupId);
      if (live) live.emptySince = s.timers.now();
      this.volatile.delete(g.groupId);
    }
  }

  /** The group as StreamsGroupDescribe shows it; null when no streams group has the id. */
  describe(groupId: string): StreamsGroupDescription | null {
    const g = this.s.streams.get(groupId);
    if (!g) return null;
    return {
      groupId,
      groupState: g.state,
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      topology: g.topology,
      members: [...g.members.values()].map((m) => ({ ...m, assigned: copyTasks(m.assigned), target: copyTasks(g.target.get(m.memberId) ?? emptyTasks()) })),
    };
  }
}

export interface StreamsGroupDescription {
  readonly groupId: string;
  readonly groupState: string;
  readonly groupEpoch: number;
  readonly assignmentEpoch: number;
  readonly topology: StreamsGroup['topology'];
  readonly members: (StreamsMember & { target: StreamsTasks })[];
}
