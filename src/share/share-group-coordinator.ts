/**
 * Share groups (KIP-932): membership by ShareGroupHeartbeat and the target assignment, as Kafka's
 * GroupMetadataManager serves the share paths.
 *
 * - A member joins with epoch 0 (its id chosen by the client, required non-empty), heartbeats
 *   with its current epoch, and leaves with -1. A member not heard from within
 *   `group.share.session.timeout.ms` is removed. Every join, leave, subscription change or change
 *   of the subscribed topics' partition counts bumps the group epoch and recomputes the
 *   assignment.
 * - Share partitions are never revoked (several members may hold one), so a member moves to the
 *   new target at once: its epoch becomes the assignment epoch (Kafka's ShareGroupAssignmentBuilder).
 * - The assignment is Kafka's SimpleAssignor for homogeneous subscriptions, per topic: with no more
 *   members than partitions each partition goes to one member (round robin); with more members,
 *   every member gets one partition and partitions are shared.
 * - The assignment is sent on join, and afterwards only when it changed.
 * - Only partitions whose share-partition state is initialized are assigned (Kafka's
 *   GroupMetadataManager, `withTopicAssignablePartitionsMap`). A heartbeat whose group subscribes
 *   to partitions not initialized yet first initializes them at the share coordinator
 *   (InitializeShareGroupState, state epoch the group epoch this heartbeat moves to, start offset
 *   -1: the share-partition resolves `share.auto.offset.reset` when it first loads), as Kafka's
 *   maybeCreateInitializeShareGroupStateRequest and persisterInitialize do, and records them
 *   (ShareGroupStatePartitionMetadata); the initialized partitions change the group's metadata, so
 *   the group epoch moves on and the new partitions are assigned. Kafka runs the initialization
 *   after answering (a timer task) and assigns on the next heartbeat; here it is awaited before the
 *   heartbeat is answered, so a joining member gets its partitions in the join's answer at the
 *   epoch Kafka would reach one heartbeat later. A partition that fails to initialize stays
 *   unassigned and is tried again by the next heartbeat.
 *
 * Membership is served from memory on the group's coordinator and persisted, before a heartbeat
 * is answered, as Kafka's share group records in __consumer_offsets (ShareGroupMetadata, member
 * metadata, target and current assignment; src/coordinator/share-group-records.ts) through the
 * group coordinator's runtime. Only what changed is written. A group not in memory (after a
 * restart, or on a new coordinator) is rebuilt from those records the first time it is named,
 * with its epochs and members; each member's session timer starts afresh, so a member that does
 * not come back is removed after `group.share.session.timeout.ms`, and one that does heartbeats
 * on with the epoch it had.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import type { CoordinatorRecord } from '../coordinator/coordinator-batch.js';
import { shareGroupRecord, shareMemberRecords, shareStatePartitionRecord, shareTargetEpochRecord } from '../coordinator/share-group-records.js';
import type { ShareTopics, ShareCoordinatorConfig, ShareStateInitializer, ShareGroupStore, ShareMember, ShareGroup, ShareHeartbeatRequest, ShareHeartbeatResult } from './share-group-model.js';
import { assignmentKey, assignShareGroup, shareMetadataKey } from './share-assignor.js';
import { initializedLists, persistedMember, shareGroupFingerprint, type ShareGroupFingerprint } from './share-group-fingerprint.js';

export const SHARE_ASSIGNOR = 'simple';

export class ShareGroupCoordinator {
  readonly groups = new Map<string, ShareGroup>();
  /** Groups being rebuilt from their records: concurrent requests share one load. */
  private readonly loading = new Map<string, Promise<void>>();
  /** Per group, what was last written: the group's and each member's record contents. */
  private readonly written = new Map<string, ShareGroupFingerprint>();
  /** Per group, the coordinator epoch (ShareGroupStore.epoch) its in-memory state belongs to. */
  private readonly epochs = new Map<string, number>();
  /** Per group, the last write queued (writes of one group commit in order). */
  private readonly writing = new Map<string, Promise<void>>();
  /** Per group, the initialization running (heartbeats of one group initialize one after another). */
  private readonly initializing = new Map<string, Promise<void>>();

  constructor(
    private readonly topics: ShareTopics,
    private readonly cfg: ShareCoordinatorConfig,
    /** Told when a member leaves or is fenced, so its share sessions close and its records are released. */
    private readonly onMemberRemoved: (groupId: string, memberId: string) => void = () => undefined,
    private readonly store: ShareGroupStore | null = null,
    /** Null: every partition counts as initialized (no share coordinator to initialize them at). */
    private readonly initializer: ShareStateInitializer | null = null,
  ) {}

  /**
   * Brings the group into memory from its records when it is not there yet (no-op without a
   * store). A group held from an earlier coordinator epoch (the partition's leadership went to
   * another node and came back) is dropped and loaded again: another coordinator may have
   * changed it meanwhile.
   */
  load(groupId: string): Promise<void> {
    if (this.store === null || groupId === '') return Promise.resolve();
    const epoch = this.store.epoch(groupId);
    if (this.groups.has(groupId)) {
      const held = this.epochs.get(groupId);
      if (held === undefined || held === epoch) return Promise.resolve();
      this.forget(groupId);
    }
    let p = this.loading.get(groupId);
    if (p === undefined) {
      const store = this.store;
      p = (async () => {
        const saved = await store.load(groupId);
        if (this.groups.has(groupId)) return;
        this.epochs.set(groupId, epoch);
        if (saved === undefined) return;
        const initialized = new Map([...saved.initialized].map(([topicId, partitions]) => [topicId, new Set(partitions)]));
        const group: ShareGroup = { groupId, groupEpoch: saved.groupEpoch, assignmentEpoch: saved.assignmentEpoch, members: new Map(), metadataKey: '', initialized };
        for (const [memberId, m] of saved.members) {
          const member: ShareMember = {
            memberId,
            memberEpoch: m.memberEpoch,
            previousMemberEpoch: m.previousMemberEpoch,
            rackId: m.rackId,
            clientId: m.clientId,
            clientHost: m.clientHost,
            subscribedTopicNames: [...m.subscribedTopicNames].sort(),
            assignment: new Map(m.assignment),
            sentAssignment: null,
            timer: null,
          };
          member.sentAssignment = assignmentKey(member);
          group.members.set(memberId, member);
        }
        // The metadata the assignment was computed for is taken as today's: a change since shows at the next one.
        group.metadataKey = shareMetadataKey(group, this.topics, this.initializer !== null);
        this.groups.set(groupId, group);
        this.written.set(groupId, shareGroupFingerprint(group));
        for (const m of group.members.values()) this.touch(group, m);
      })().finally(() => this.loading.delete(groupId));
      this.loading.set(groupId, p);
    }
    return p;
  }

  async heartbeat(req: ShareHeartbeatRequest): Promise<ShareHeartbeatResult> {
    try {
      await this.load(req.groupId);
    } catch (e) {
      return { errorCode: errorCodeOf(e), errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
    }
    const bad = this.precheck(req);
    if (bad !== null) return bad;
    await this.initializeSubscribed(req);
    const r = this.heartbeatInMemory(req);
    if (r.errorCode !== 0) return r;
    try {
      await this.persist(req.groupId);
    } catch (e) {
      return { errorCode: errorCodeOf(e), errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
    }
    return r;
  }

  /** The request's errors, as Kafka's checks find them, before anything changes; null when it may proceed. */
  private precheck(req: ShareHeartbeatRequest): ShareHeartbeatResult | null {
    const fail = (errorCode: number, errorMessage: string): ShareHeartbeatResult => ({ errorCode, errorMessage, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null });
    if (req.groupId === '') return fail(ErrorCode.INVALID_REQUEST, 'GroupId can not be empty.');
    if (req.memberId === '') return fail(ErrorCode.INVALID_REQUEST, 'MemberId can not be empty.');
    if (req.memberEpoch < -1) return fail(ErrorCode.INVALID_REQUEST, `MemberEpoch is invalid: ${req.memberEpoch}.`);
    if (req.memberEpoch === 0 && (req.subscribedTopicNames === null || req.subscribedTopicNames.length === 0)) {
      return fail(ErrorCode.INVALID_REQUEST, 'SubscribedTopicNames must be set in first request.');
    }
    const group = this.groups.get(req.groupId);
    // A heartbeat or leave needs the group (Kafka's getOrMaybeCreateShareGroup, shareGroup): GROUP_ID_NOT_FOUND.
    if (req.memberEpoch !== 0 && group === undefined) return fail(ErrorCode.GROUP_ID_NOT_FOUND, req.memberEpoch === -1 ? `Group ${req.groupId} not found.` : `Share group ${req.groupId} not found.`);
    const member = group?.members.get(req.memberId);
    if (req.memberEpoch === -1 && member === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${req.groupId}.`);
    if (req.memberEpoch > 0) {
      if (group === undefined || member === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${req.groupId}.`);
      if (req.memberEpoch !== member.memberEpoch) return fail(ErrorCode.FENCED_MEMBER_EPOCH, `The share group member has a smaller or larger member epoch (${req.memberEpoch}) than the one known by the group coordinator (${member.memberEpoch}).`);
    }
    if (req.memberEpoch !== -1 && member === undefined && (group?.members.size ?? 0) >= this.cfg.maxSize) {
      return fail(ErrorCode.GROUP_MAX_SIZE_REACHED, `The share group has reached its maximum capacity of ${this.cfg.maxSize} members.`);
    }
    return null;
  }

  /**
   * Initializes the partitions of the group's subscribed topics (this request's subscription in
   * place of the member's) not initialized yet, as Kafka's subscribedTopicsChangeMap finds them.
   */
  private async initializeSubscribed(req: ShareHeartbeatRequest): Promise<void> {
    const initializer = this.initializer;
    if (initializer === null || req.memberEpoch === -1) return;
    const run = (this.initializing.get(req.groupId) ?? Promise.resolve()).then(async () => {
      const group = this.groups.get(req.groupId);
      const names = new Set(req.subscribedTopicNames ?? []);
      for (const m of group?.members.values() ?? []) if (m.memberId !== req.memberId || req.subscribedTopicNames === null) for (const n of m.subscribedTopicNames) names.add(n);
      const pending: { topicId: string; partition: number }[] = [];
      for (const name of [...names].sort()) {
        const topicId = this.topics.topicId(name);
        if (topicId === undefined) continue;
        const done = group?.initialized.get(topicId);
        for (let partition = 0; partition < (this.topics.partitionCount(name) ?? 0); partition++) if (done?.has(partition) !== true) pending.push({ topicId, partition });
      }
      if (pending.length === 0) return;
      // The epoch this heartbeat moves the group to: newly initialized partitions always bump it.
      const initialized = await initializer.initialize(req.groupId, (group?.groupEpoch ?? 0) + 1, pending);
      if (initialized.length === 0) return;
      let g = this.groups.get(req.groupId);
      if (g === undefined) {
        g = { groupId: req.groupId, groupEpoch: 0, assignmentEpoch: 0, members: new Map(), metadataKey: '', initialized: new Map() };
        this.groups.set(req.groupId, g);
      }
      for (const { topicId, partition } of initialized) {
        let set = g.initialized.get(topicId);
        if (set === undefined) g.initialized.set(topicId, (set = new Set()));
        set.add(partition);
      }
    });
    const tail = run.catch(() => undefined);
    this.initializing.set(req.groupId, tail);
    try {
      await run;
    } catch {
      // The initializer never rejects; a partition it could not initialize stays unassigned.
    } finally {
      if (this.initializing.get(req.groupId) === tail) this.initializing.delete(req.groupId);
    }
  }

  private heartbeatInMemory(req: ShareHeartbeatRequest): ShareHeartbeatResult {
    const bad = this.precheck(req);
    if (bad !== null) return bad;
    const interval = this.cfg.heartbeatIntervalMs(req.groupId);
    let group = this.groups.get(req.groupId);
    let member = group?.members.get(req.memberId);
    if (req.memberEpoch === -1 && group !== undefined && member !== undefined) {
      this.remove(group, member);
      return { errorCode: 0, errorMessage: null, memberId: req.memberId, memberEpoch: -1, heartbeatIntervalMs: interval, assignment: null };
    }
    if (group === undefined) {
      group = { groupId: req.groupId, groupEpoch: 0, assignmentEpoch: 0, members: new Map(), metadataKey: '', initialized: new Map() };
      this.groups.set(req.groupId, group);
    }
    let bump = false;
    if (member === undefined) {
      member = { memberId: req.memberId, memberEpoch: 0, previousMemberEpoch: -1, rackId: req.rackId, clientId: req.clientId, clientHost: req.clientHost, subscribedTopicNames: [], assignment: new Map(), sentAssignment: null, timer: null };
      group.members.set(member.memberId, member);
      bump = true;
    }
    if (req.memberEpoch === 0) member.sentAssignment = null;
    if (req.rackId !== null) member.rackId = req.rackId;
    if (req.subscribedTopicNames !== null) {
      const names = [...new Set(req.subscribedTopicNames)].sort();
      if (names.join('\0') !== member.subscribedTopicNames.join('\0')) {
        member.subscribedTopicNames = names;
        bump = true;
      }
    }
    const metadataKey = shareMetadataKey(group, this.topics, this.initializer !== null);
    if (bump || metadataKey !== group.metadataKey) {
      group.groupEpoch++;
      assignShareGroup(group, metadataKey, this.topics, this.initializer !== null);
    }
    // The member learns the new epoch in this response; until then its previous one stays valid.
    if (member.memberEpoch !== group.assignmentEpoch) {
      member.previousMemberEpoch = member.memberEpoch;
      member.memberEpoch = group.assignmentEpoch;
    }
    this.touch(group, member);
    const key = assignmentKey(member);
    const changed = key !== member.sentAssignment;
    member.sentAssignment = key;
    return {
      errorCode: 0,
      errorMessage: null,
      memberId: member.memberId,
      memberEpoch: member.memberEpoch,
      heartbeatIntervalMs: interval,
      assignment: changed ? [...member.assignment].map(([topicId, partitions]) => ({ topicId, partitions })) : null,
    };
  }

  describe(groupId: string): ShareGroup | undefined {
    return this.groups.get(groupId);
  }

  /** The group, rebuilt from its records when not in memory; undefined when it has none (or they cannot be read here). */
  async find(groupId: string): Promise<ShareGroup | undefined> {
    await this.load(groupId).catch(() => undefined);
    return this.groups.get(groupId);
  }

  /** The group, created empty (and written) when unknown: AlterShareGroupOffsets may name a group before any member joins. */
  async ensureGroup(groupId: string): Promise<ShareGroup> {
    await this.load(groupId);
    let g = this.groups.get(groupId);
    if (g === undefined) {
      g = { groupId, groupEpoch: 0, assignmentEpoch: 0, members: new Map(), metadataKey: '', initialized: new Map() };
      this.groups.set(groupId, g);
      await this.persist(groupId);
    }
    return g;
  }

  /** topic id → the initialized partitions of the group (DescribeShareGroupOffsets of every partition, DeleteShareGroupOffsets). */
  initializedPartitions(groupId: string): Map<string, number[]> {
    const g = this.groups.get(groupId);
    return g === undefined ? new Map() : initializedLists(g);
  }

  /** Records partitions as initialized (AlterShareGroupOffsets gave them a start offset) and writes it. */
  async markInitialized(groupId: string, topicId: string, partitions: readonly number[]): Promise<void> {
    const g = this.groups.get(groupId);
    if (g === undefined || partitions.length === 0) return;
    let set = g.initialized.get(topicId);
    if (set === undefined) g.initialized.set(topicId, (set = new Set()));
    for (const p of partitions) set.add(p);
    await this.persist(groupId);
  }

  /** Forgets a topic's initialized partitions (its state was deleted) and writes it. */
  async markUninitialized(groupId: string, topicId: string): Promise<void> {
    const g = this.groups.get(groupId);
    if (g === undefined || !g.initialized.delete(topicId)) return;
    await this.persist(groupId);
  }

  /** Deletes an empty group (DeleteGroups): NON_EMPTY_GROUP while it has members. */
  async delete(groupId: string): Promise<number> {
    try {
      await this.load(groupId);
    } catch (e) {
      return errorCodeOf(e);
    }
    const g = this.groups.get(groupId);
    if (g === undefined) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (g.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    this.groups.delete(groupId);
    try {
      await this.persist(groupId);
    } catch (e) {
      return errorCodeOf(e);
    }
    return ErrorCode.NONE;
  }

  /**
   * Writes what changed in the group since the last write: its epochs, and the records of each
   * member added, changed or removed (tombstones), or the group's tombstones once it is gone.
   * The fingerprints are taken when the records are queued, so concurrent heartbeats write each
   * change once; a failed write forgets them, and the next one writes the group whole.
   */
  private async persist(groupId: string): Promise<void> {
    if (this.store === null) return;
    const before: ShareGroupFingerprint = this.written.get(groupId) ?? { group: '', initialized: '', members: new Map<string, string>() };
    const g = this.groups.get(groupId);
    const records: CoordinatorRecord[] = [];
    if (g === undefined) {
      if (before.group === '') return;
      for (const memberId of before.members.keys()) records.push(...shareMemberRecords(groupId, memberId, null));
      records.push(shareTargetEpochRecord(groupId, null));
      if (before.initialized !== '') records.push(shareStatePartitionRecord(groupId, null, this.topicNameOf));
      records.push(shareGroupRecord(groupId, null));
      this.written.delete(groupId);
    } else {
      const now = shareGroupFingerprint(g);
      if (now.group !== before.group) records.push(shareGroupRecord(groupId, g.groupEpoch));
      for (const [memberId, fp] of now.members) if (before.members.get(memberId) !== fp) records.push(...shareMemberRecords(groupId, memberId, persistedMember(g.members.get(memberId)!)));
      for (const memberId of before.members.keys()) if (!now.members.has(memberId)) records.push(...shareMemberRecords(groupId, memberId, null));
      if (now.group !== before.group) records.push(shareTargetEpochRecord(groupId, g.assignmentEpoch, Date.now()));
      if (now.initialized !== before.initialized) records.push(shareStatePartitionRecord(groupId, initializedLists(g), this.topicNameOf));
      this.written.set(groupId, now);
    }
    // Nothing new: the answer still waits for the write that carries this group's last change.
    if (records.length === 0) return this.writing.get(groupId);
    const w = this.store.write(groupId, records).catch((e: unknown) => {
      this.written.delete(groupId);
      throw e;
    });
    this.writing.set(groupId, w);
    try {
      await w;
    } finally {
      if (this.writing.get(groupId) === w) this.writing.delete(groupId);
    }
  }

  private readonly topicNameOf = (topicId: string): string => this.topics.topicName(topicId) ?? '';

  /** Drops the group from memory (not from its records). */
  private forget(groupId: string): void {
    const g = this.groups.get(groupId);
    for (const m of g?.members.values() ?? []) if (m.timer) clearTimeout(m.timer);
    this.groups.delete(groupId);
    this.written.delete(groupId);
    this.epochs.delete(groupId);
  }

  close(): void {
    for (const g of this.groups.values()) for (const m of g.members.values()) if (m.timer) clearTimeout(m.timer);
  }

  private touch(group: ShareGroup, m: ShareMember): void {
    if (m.timer) clearTimeout(m.timer);
    m.timer = setTimeout(() => {
      if (group.members.get(m.memberId) === m) this.remove(group, m);
    }, this.cfg.sessionTimeoutMs(group.groupId));
    m.timer.unref();
  }

  private remove(group: ShareGroup, m: ShareMember): void {
    if (m.timer) clearTimeout(m.timer);
    group.members.delete(m.memberId);
    group.groupEpoch++;
    const key = shareMetadataKey(group, this.topics, this.initializer !== null);
    assignShareGroup(group, key, this.topics, this.initializer !== null);
    this.onMemberRemoved(group.groupId, m.memberId);
    // A session timeout has no one to answer: its write is best effort (a leave awaits it in heartbeat).
    this.persist(group.groupId).catch(() => undefined);
  }
}

