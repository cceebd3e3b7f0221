/**
 * The mirror metadata manager (KIP-1279 spec §2 MirrorMetadataManager, §7, §8): it watches the
 * node's metadata image, keeps one source connection and one mirror fetcher per mirror, drives
 * each locally led mirror partition through the state machine and runs each state's action:
 *
 *   LOG_TRUNCATION  loop check (ListClusterMirrors on the source), LME lookup
 *                   (DescribeClusterMirrors with our cluster id), truncate to endOffsetForEpoch(LME)
 *   MIRRORING       add the partition to the mirror's fetcher
 *   EPOCH_FENCING   remove it, bump the destination leader epoch above the source's, MIRRORING
 *   PAUSING         remove it from the fetcher, PAUSED
 *   STOPPING        remove fetcher → persist LME → bump epoch → ABORT open txns →
 *                   MIRROR_PID_RESET → STOPPED
 *
 * Concurrency contract: single event loop; state transitions are serialised per partition by
 * the state machine; `sync()` may run any number of times (it is idempotent).
 */
import { buildEndTxnMarkerBatch, buildMirrorPidResetBatch } from '../protocol/control-records.js';
import { iterateBatches } from '../protocol/record-batch.js';
import { MirrorFetcher, type MirrorTopicPartition } from '../fetcher/mirror-fetcher.js';
import { SourceClient, sourceClientOptionsFromConfig } from '../fetcher/source-client.js';
import { connectionFingerprint, matchesAny, mirrorConfigValue, splitList, type MirrorBrokerConfig } from './mirror-config.js';
import type { MirrorCoordinator } from './mirror-coordinator.js';
import { syncAcls } from './acl-sync.js';
import { syncGroupOffsets } from './group-offset-sync.js';
import { syncTopicConfigs } from './topic-config-sync.js';
import { hasMirrorLoop, lookupLastMirrorEpoch } from './source-lookups.js';
import type { MirrorHost, MirrorLog } from './mirror-host.js';
import { MirrorPartitionState as S, mirrorStateName, type MirrorPartitionStateValue } from './mirror-partition-state.js';
import {
  MirrorStateMachine,
  NonRetryableMirrorError,
  partitionKeyString,
  type MirrorPartitionKey,
  type State,
  type StateAction,
} from './state-machine.js';
import { channel } from 'node:diagnostics_channel';

/** Failed sync rounds per kind, counted by src/metrics (the channel names are in src/metrics/channels.ts). */
const syncErrorChannel = channel('fjord:mirror-sync-error');

/** One mirror's live parts. */
interface MirrorRuntime {
  readonly name: string;
  readonly fingerprint: string;
  readonly client: SourceClient;
  readonly fetcher: MirrorFetcher;
  readonly sourceClusterId: string | null;
}

export interface PartitionDescription {
  readonly mirrorName: string;
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly state: State;
  readonly stateName: string;
  readonly retryAttempt: number;
  readonly errorMessage: string | null;
  readonly sourceOffset: number;
  readonly destinationOffset: number;
  readonly lag: number;
}

export class MirrorManager {
  readonly machine: MirrorStateMachine;
  private readonly runtimes = new Map<string, MirrorRuntime>();
  /** Partitions the machine tracks, by key string. */
  private readonly tracked = new Map<string, MirrorPartitionKey>();
  private readonly fencedEpochs = new Map<string, number>();
  private unsubscribe: (() => void) | null = null;
  private syncing: Promise<void> | null = null;
  private resync = false;
  private refreshTimer: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly host: MirrorHost,
    private readonly coordinator: MirrorCoordinator,
    private readonly config: MirrorBrokerConfig,
    private readonly log: (msg: string) => void = () => undefined,
  ) {
    const actions: Partial<Record<State, StateAction>> = {
      [S.LOG_TRUNCATION]: (k) => this.onLogTruncation(k),
      [S.MIRRORING]: (k) => this.onMirroring(k),
      [S.EPOCH_FENCING]: (k) => this.onEpochFencing(k),
      [S.PAUSING]: (k) => this.onPausing(k),
      [S.STOPPING]: (k) => this.onStopping(k),
    };
    this.machine = new MirrorStateMachine({
      store: coordinator,
      actions,
      clock: host.clock,
      timers: host.timers,
      retry: {
        initialBackoffMs: config.failedRetryInitialBackoffMs,
        maxBackoffMs: config.failedRetryMaxBackoffMs,
        maxAttempts: config.failedRetryMaxAttempts,
        jitter: 0.2,
      },
      onTransition: (key, from, to) => {
        this.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: ${from === null ? 'none' : mirrorStateName(from)} -> ${mirrorStateName(to.state)}${to.errorMessage !== null && to.state === S.FAILED ? ` (${to.errorMessage})` : ''}`);
        if (to.state === S.FAILED) void this.runtimes.get(key.mirrorName)?.fetcher.removePartitions([this.tp(key)]);
      },
      onError: (key, err) => this.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: ${(err as Error).message}`),
    });
  }

  start(): void {
    this.unsubscribe = this.host.onMetadataChange(() => void this.sync());
    this.scheduleRefresh();
    void this.sync();
  }

  /** Reconciles mirrors and partitions with the metadata image; coalesces concurrent calls. */
  sync(): Promise<void> {
    if (this.syncing !== null) {
      this.resync = true;
      return this.syncing;
    }
    const run = (async () => {
      do {
        this.resync = false;
        await this.syncOnce().catch((err: unknown) => this.log(`mirror sync failed: ${(err as Error).message}`));
      } while (this.resync && !this.closed);
    })().finally(() => {
      this.syncing = null;
    });
    this.syncing = run;
    return run;
  }

  /** Client produce is allowed unless the topic is bound to a mirror and the partition is not STOPPED. */
  isProduceAllowed(topic: string, partition: number): boolean {
    const b = this.host.mirrorTopicBindings().find((x) => x.topicName === topic);
    if (b === undefined) return true;
    const key = this.keyFor(b.mirrorName, b.topicId, topic, partition);
    const state = this.machine.state(key);
    if (state === S.STOPPED) return true;
    // A partition this node has not loaded yet: the desired state decides (a topic that was
    // never started again after a stop has no reason to be read-only).
    return state === S.UNKNOWN && b.desiredState === S.STOPPED && !this.tracked.has(partitionKeyString(key));
  }

  /** Current state of every partition of a mirror led here (for validation and describe). */
  describe(mirrorName: string): PartitionDescription[] {
    const out: PartitionDescription[] = [];
    const rt = this.runtimes.get(mirrorName);
    for (const key of this.tracked.values()) {
      if (key.mirrorName !== mirrorName) continue;
      const snap = this.machine.snapshot(key);
      const state = snap?.state ?? S.UNKNOWN;
      const status = state === S.MIRRORING ? rt?.fetcher.status(this.tp(key)) : undefined;
      const log = this.host.partitionLog(key.topicName, key.partition);
      out.push({
        mirrorName,
        topic: key.topicName,
        topicId: key.topicId,
        partition: key.partition,
        state,
        stateName: mirrorStateName(state),
        retryAttempt: snap?.retryAttempt ?? 0,
        errorMessage: snap?.errorMessage ?? null,
        sourceOffset: status?.sourceHighWatermark ?? -1,
        destinationOffset: status !== undefined ? (log?.highWatermark ?? -1) : -1,
        lag: status?.lag ?? -1,
      });
    }
    return out.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  }

  /** Actual states of a topic's locally led partitions (UNKNOWN when not loaded). */
  topicStates(mirrorName: string, topicName: string, topicId: string): State[] {
    const n = this.host.partitionCount(topicName) ?? 0;
    const out: State[] = [];
    for (let p = 0; p < n; p++) out.push(this.machine.state(this.keyFor(mirrorName, topicId, topicName, p)));
    return out;
  }

  /** Connected source client of a mirror (for the handlers: source metadata for StartMirrorTopics). */
  sourceClient(mirrorName: string): SourceClient | undefined {
    return this.runtimes.get(mirrorName)?.client;
  }

  /** Drops everything about a deleted mirror: fetcher, connections, `__mirror_state` records. */
  async forgetMirror(mirrorName: string): Promise<void> {
    for (const [k, key] of [...this.tracked]) {
      if (key.mirrorName !== mirrorName) continue;
      this.machine.forget(key);
      this.tracked.delete(k);
    }
    await this.closeRuntime(mirrorName);
    await this.coordinator.tombstoneMirror(mirrorName);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.refreshTimer?.();
    this.machine.close();
    await this.syncing?.catch(() => undefined);
    for (const name of [...this.runtimes.keys()]) await this.closeRuntime(name);
    this.selfClient?.close();
  }

  // ------------------------------------------------------------------ reconciliation

  private async syncOnce(): Promise<void> {
    if (this.closed) return;
    const configs = this.host.mirrorConfigs();
    // Mirrors: create, rebuild on connection changes, drop when deleted.
    for (const [name, cfg] of configs) {
      const rt = this.runtimes.get(name);
      const fp = connectionFingerprint(cfg);
      if (rt !== undefined && rt.fingerprint === fp) continue;
      if (rt !== undefined) await this.closeRuntime(name);
      try {
        this.runtimes.set(name, this.newRuntime(name, cfg, fp));
      } catch (err) {
        this.log(`mirror ${name}: cannot build its source client: ${(err as Error).message}`);
      }
      if (rt !== undefined) {
        // Connection settings changed: re-run MIRRORING so partitions join the new fetcher.
        for (const key of this.tracked.values()) {
          if (key.mirrorName === name && this.machine.state(key) === S.MIRRORING) void this.machine.transition(key, S.MIRRORING, { expectedFrom: S.MIRRORING });
        }
      }
    }
    for (const name of [...this.runtimes.keys()]) if (!configs.has(name)) await this.closeRuntime(name);

    // Partitions: every locally led partition of every bound topic.
    const seen = new Set<string>();
    for (const b of this.host.mirrorTopicBindings()) {
      if (!configs.has(b.mirrorName)) continue;
      const n = this.host.partitionCount(b.topicName) ?? 0;
      for (let p = 0; p < n; p++) {
        if (!this.host.isLocalLeader(b.topicName, p)) continue;
        const key = this.keyFor(b.mirrorName, b.topicId, b.topicName, p);
        const ks = partitionKeyString(key);
        seen.add(ks);
        if (!this.tracked.has(ks)) {
          this.tracked.set(ks, key);
          const stored = await this.coordinator.read(b.mirrorName, b.topicId, p);
          await this.machine.resume(key, stored.state, b.desiredState);
        } else {
          await this.machine.setDesired(key, b.desiredState);
        }
      }
    }
    for (const [ks, key] of [...this.tracked]) {
      if (seen.has(ks)) continue;
      this.machine.forget(key);
      this.tracked.delete(ks);
      await this.runtimes.get(key.mirrorName)?.fetcher.removePartitions([this.tp(key)]);
    }
  }

  private newRuntime(name: string, cfg: ReadonlyMap<string, string>, fingerprint: string): MirrorRuntime {
    const client = new SourceClient(sourceClientOptionsFromConfig(name, cfg));
    const num = (k: string, d: number): number => {
      const v = Number(mirrorConfigValue(cfg, k));
      return Number.isFinite(v) ? v : d;
    };
    const fetcher = new MirrorFetcher(
      client,
      {
        log: (tp) => this.host.partitionLog(tp.topic, tp.partition),
        destinationLeaderEpoch: (tp) => this.host.leaderEpoch(tp.topic, tp.partition) ?? 0,
        onEpochFenced: (tp, epoch) => {
          const key = this.keyFor(name, tp.topicId, tp.topic, tp.partition);
          this.fencedEpochs.set(partitionKeyString(key), epoch);
          void this.machine.transition(key, S.EPOCH_FENCING, { expectedFrom: S.MIRRORING });
        },
        requestEpochBump: (tp, min) => {
          void this.bumpLeaderEpoch(tp.topic, tp.topicId, tp.partition, min).catch((err: unknown) =>
            this.log(`mirror ${name}: proactive epoch bump of ${tp.topic}-${tp.partition} failed: ${(err as Error).message}`),
          );
        },
        onPartitionFailed: (tp, err, nonRetryable) => {
          const key = this.keyFor(name, tp.topicId, tp.topic, tp.partition);
          void this.machine.fail(key, nonRetryable ? new NonRetryableMirrorError(err.message) : err);
        },
        onProgress: (tp) => this.machine.markHealthy(this.keyFor(name, tp.topicId, tp.topic, tp.partition)),
      },
      {
        maxWaitMs: num('mirror.fetch.wait.max.ms', this.config.fetchWaitMaxMs),
        minBytes: num('mirror.fetch.min.bytes', this.config.fetchMinBytes),
        maxBytes: num('mirror.fetch.response.max.bytes', this.config.fetchResponseMaxBytes),
        partitionMaxBytes: num('mirror.fetch.max.bytes', this.config.fetchMaxBytes),
        backoffMs: num('mirror.fetch.backoff.ms', this.config.fetchBackoffMs),
        unreachableFailMs: num('mirror.socket.timeout.ms', this.config.socketTimeoutMs),
      },
      () => this.host.clock.now(),
    );
    return { name, fingerprint, client, fetcher, sourceClusterId: cfg.get('mirror.source.cluster.id') ?? null };
  }

  private async closeRuntime(name: string): Promise<void> {
    const rt = this.runtimes.get(name);
    if (rt === undefined) return;
    this.runtimes.delete(name);
    await rt.fetcher.close();
    rt.client.close();
  }

  /** Periodic source checks (spec §10.6): a changed source cluster id fails the mirror for good. */
  private scheduleRefresh(): void {
    if (this.closed) return;
    this.refreshTimer = this.host.timers.schedule(this.config.metadataRefreshIntervalMs, () => {
      void this.refreshSources().finally(() => this.scheduleRefresh());
    });
  }

  async refreshSources(): Promise<void> {
    for (const rt of [...this.runtimes.values()]) {
      if (this.closed) return;
      let id: string;
      try {
        id = (await rt.client.describeCluster()).clusterId;
      } catch {
        if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'metadata_refresh' });
        continue; // unreachable sources are the fetcher's business
      }
      if (rt.sourceClusterId !== null && id !== rt.sourceClusterId) {
        for (const key of this.tracked.values()) {
          if (key.mirrorName !== rt.name) continue;
          const st = this.machine.state(key);
          if (st === S.STOPPED || st === S.PAUSED) continue;
          await this.machine.fail(key, new NonRetryableMirrorError(`The source cluster id changed from ${rt.sourceClusterId} to ${id}.`));
        }
        continue;
      }
      await this.discoverAndExclude(rt).catch((err: unknown) => this.log(`mirror ${rt.name}: topic discovery failed: ${(err as Error).message}`));
      await this.syncGroups(rt);
      await this.syncConfigs(rt);
      await this.syncAclsOf(rt);
    }
  }

  /** Best effort ACL sync (spec §10.3); a failed round is logged and retried at the next refresh. */
  private async syncAclsOf(rt: MirrorRuntime): Promise<void> {
    try {
      const r = await syncAcls(rt.name, this.host, rt.client, this.self());
      if (r.created + r.deleted > 0) this.log(`mirror ${rt.name}: ACL sync created ${r.created}, deleted ${r.deleted}`);
    } catch (err) {
      if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'acls' });
      this.log(`mirror ${rt.name}: ACL sync failed: ${(err as Error).message}`);
    }
  }

  /** Best effort topic config sync (spec §10.1); `topics` limits it to a topic that just started. */
  private async syncConfigs(rt: MirrorRuntime, topics?: string[]): Promise<void> {
    try {
      const n = await syncTopicConfigs(rt.name, this.host, rt.client, this.self(), topics);
      if (n > 0) this.log(`mirror ${rt.name}: synced ${n} topic config values`);
    } catch (err) {
      if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'topic_configs' });
      this.log(`mirror ${rt.name}: topic config sync failed: ${(err as Error).message}`);
    }
  }

  private selfClient: SourceClient | null = null;

  /** A client to this node's own listener, for group offset commits (the reference's destination Admin). */
  private self(): SourceClient {
    this.selfClient ??= new SourceClient({ bootstrapServers: [`${this.host.host}:${this.host.port}`], clientId: 'fjord-mirror-groups', requestTimeoutMs: 10_000 });
    return this.selfClient;
  }

  /** Best effort: a failed round is logged and retried at the next refresh. */
  private async syncGroups(rt: MirrorRuntime, topics?: ReadonlySet<string>): Promise<void> {
    try {
      const r = await syncGroupOffsets(rt.name, this.host, rt.client, this.self(), topics);
      if (r.committed > 0) this.log(`mirror ${rt.name}: synced ${r.committed} group offsets (${r.groups} groups, ${r.skippedActive} active here skipped)`);
    } catch (err) {
      if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'group_offsets' });
      this.log(`mirror ${rt.name}: group offset sync failed: ${(err as Error).message}`);
    }
  }

  /** Set by the control plane: starts / stops topics on behalf of pattern discovery. */
  topicDiscovery: { start(mirror: string, topics: string[]): Promise<unknown>; stop(mirror: string, topics: string[]): Promise<unknown> } | null = null;

  /**
   * Pattern discovery and exclude enforcement (spec §10.4, §10.5): source topics matching
   * `mirror.topics.include` and not `mirror.topics.exclude` that no mirror has bound yet are
   * started; active topics of this mirror that now match the exclude list are stopped.
   */
  private async discoverAndExclude(rt: MirrorRuntime): Promise<void> {
    const discovery = this.topicDiscovery;
    const cfg = this.host.mirrorConfigs().get(rt.name);
    if (discovery === null || cfg === undefined) return;
    const include = splitList(cfg.get('mirror.topics.include'));
    const exclude = splitList(mirrorConfigValue(cfg, 'mirror.topics.exclude'));
    const bindings = this.host.mirrorTopicBindings();
    const excluded = bindings.filter((b) => b.mirrorName === rt.name && b.desiredState !== S.STOPPED && matchesAny(b.topicName, exclude)).map((b) => b.topicName);
    if (excluded.length > 0) await discovery.stop(rt.name, excluded);
    if (include.length === 0) return;
    const bound = new Set(bindings.map((b) => b.topicName));
    const md = await rt.client.metadata(null);
    const fresh = md.topics
      .filter((t) => t.errorCode === 0 && t.name !== null && !t.isInternal)
      .map((t) => t.name as string)
      .filter((n) => !bound.has(n) && matchesAny(n, include) && !matchesAny(n, exclude));
    if (fresh.length > 0) await discovery.start(rt.name, fresh);
  }

  // ------------------------------------------------------------------ state actions

  private async onLogTruncation(key: MirrorPartitionKey): Promise<void> {
    const rt = this.requireRuntime(key.mirrorName);
    const log = await this.awaitLog(key);
    if (await hasMirrorLoop(rt.client, this.host.clusterId, key.topicName)) {
      throw new NonRetryableMirrorError(`Detected mirror loop: the source cluster mirrors ${key.topicName} from this cluster (${this.host.clusterId}).`);
    }
    const lme = await lookupLastMirrorEpoch(rt.client, this.host.clusterId, key.topicId, key.partition);
    let target = 0;
    if (lme >= 0) {
      const r = log.endOffsetForEpoch(lme);
      target = r.endOffset >= 0 ? r.endOffset : 0;
    }
    if (target < log.logEndOffset) {
      this.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: truncating to ${target} (last mirrored epoch ${lme})`);
      await log.truncateTo(target);
    }
    await this.machine.transition(key, S.MIRRORING, { expectedFrom: S.LOG_TRUNCATION });
  }

  /**
   * The partition's log. A node may open logs lazily right after a topic is created, so give it
   * a moment before calling it a failure.
   */
  private async awaitLog(key: MirrorPartitionKey, timeoutMs = 5000): Promise<MirrorLog> {
    const until = this.host.clock.now() + timeoutMs;
    for (;;) {
      const log = this.host.partitionLog(key.topicName, key.partition);
      if (log !== undefined) return log;
      if (this.closed || this.host.clock.now() >= until) throw new Error(`no local log for ${key.topicName}-${key.partition}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async onMirroring(key: MirrorPartitionKey): Promise<void> {
    await this.awaitLog(key);
    const rt = this.requireRuntime(key.mirrorName);
    if (!rt.fetcher.has(this.tp(key))) {
      rt.fetcher.addPartitions([this.tp(key)]);
      // A topic joining the mirror gets the source's topic configs without waiting for a refresh.
      if (key.partition === 0) void this.syncConfigs(rt, [key.topicName]);
    }
  }

  private async onEpochFencing(key: MirrorPartitionKey): Promise<void> {
    const rt = this.requireRuntime(key.mirrorName);
    await rt.fetcher.removePartitions([this.tp(key)]);
    const ks = partitionKeyString(key);
    const sourceEpoch = this.fencedEpochs.get(ks) ?? -1;
    this.fencedEpochs.delete(ks);
    if (sourceEpoch >= 0) await this.bumpLeaderEpoch(key.topicName, key.topicId, key.partition, sourceEpoch + 10);
    await this.machine.transition(key, S.MIRRORING, { expectedFrom: S.EPOCH_FENCING });
  }

  private async onPausing(key: MirrorPartitionKey): Promise<void> {
    await this.runtimes.get(key.mirrorName)?.fetcher.removePartitions([this.tp(key)]);
    await this.machine.transition(key, S.PAUSED, { expectedFrom: S.PAUSING });
  }

  /** STOPPING, in the order of spec §8.5; every step is idempotent so a new leader can redo it. */
  private async onStopping(key: MirrorPartitionKey): Promise<void> {
    // A last group offset sync for this topic, so consumers resume where they were on the source
    // (bounded: a failover often happens because the source is gone).
    const rt = this.runtimes.get(key.mirrorName);
    if (rt !== undefined) {
      await Promise.race([this.syncGroups(rt, new Set([key.topicName])), new Promise((r) => setTimeout(r, 5000).unref())]);
    }
    // a. remove the fetcher
    await rt?.fetcher.removePartitions([this.tp(key)]);
    const log = await this.awaitLog(key);
    // b. the last mirrored epoch, persisted
    const lme = await this.lastMirroredEpoch(key, log);
    if (lme >= 0) await this.coordinator.write(key.mirrorName, [{ topicId: key.topicId, partition: key.partition, lastMirrorEpoch: lme }]);
    // c. bump the leader epoch past it, and wait until the image shows it
    await this.bumpLeaderEpoch(key.topicName, key.topicId, key.partition, Math.max(lme, 0));
    const epoch = this.host.leaderEpoch(key.topicName, key.partition) ?? 0;
    // d. abort open transactions
    for (const txn of this.host.openTransactions(key.topicName, key.partition)) {
      const batch = buildEndTxnMarkerBatch({
        commit: false,
        producerId: txn.producerId,
        producerEpoch: txn.producerEpoch,
        coordinatorEpoch: txn.coordinatorEpoch,
        partitionLeaderEpoch: epoch,
        timestamp: this.host.clock.now(),
      });
      const r = await this.host.appendCoordinatorBatch(key.topicName, key.partition, batch);
      if (r.errorCode !== 0) throw new Error(`writing the ABORT marker for producer ${txn.producerId} failed with error ${r.errorCode}`);
    }
    // e. the producer-state barrier
    const sourceClusterId = this.host.mirrorConfigs().get(key.mirrorName)?.get('mirror.source.cluster.id') ?? '';
    const reset = buildMirrorPidResetBatch({ sourceClusterId, partitionLeaderEpoch: epoch, timestamp: this.host.clock.now() });
    const r = await this.host.appendCoordinatorBatch(key.topicName, key.partition, reset);
    if (r.errorCode !== 0) throw new Error(`writing MIRROR_PID_RESET failed with error ${r.errorCode}`);
    // f. writable
    await this.machine.transition(key, S.STOPPED, { expectedFrom: S.STOPPING });
  }

  /**
   * The epoch of the last mirrored batch: the partition leader epoch of the log's last batch.
   * (The epoch cache's latest entry can be a destination leader-epoch marker written at a bump.)
   * When STOPPING is redone after our own markers were appended, the epoch recorded the first
   * time is kept.
   */
  private async lastMirroredEpoch(key: MirrorPartitionKey, log: MirrorLog): Promise<number> {
    if (log.logEndOffset <= log.logStartOffset) return -1;
    const r = await log.readToBuffer({ fetchOffset: log.logEndOffset - 1, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
    let epoch = -1;
    let control = false;
    for (const b of iterateBatches(r.records)) {
      epoch = b.partitionLeaderEpoch;
      control = b.isControl;
    }
    const current = this.host.leaderEpoch(key.topicName, key.partition) ?? -1;
    if (control && epoch === current) {
      const stored = (await this.coordinator.read(key.mirrorName, key.topicId, key.partition)).lastMirrorEpoch;
      if (stored >= 0) return stored;
    }
    return epoch;
  }

  /** BumpLeaderEpochs semantics: when the current epoch ≤ min, the new epoch is max(min + 1, current). */
  async bumpLeaderEpoch(topic: string, topicId: string, partition: number, minLeaderEpoch: number): Promise<number> {
    const current = this.host.leaderEpoch(topic, partition);
    if (current === undefined) throw new Error(`unknown partition ${topic}-${partition}`);
    if (current > minLeaderEpoch) return current;
    const leaderEpoch = Math.max(minLeaderEpoch + 1, current);
    const res = await this.host.controllerWrite([{ type: 'bumpLeaderEpoch', topicId, partition, leaderEpoch }]);
    if (res.errorCode !== 0) throw new Error(`BumpLeaderEpochs failed with error ${res.errorCode}: ${res.errorMessage ?? ''}`);
    return leaderEpoch;
  }

  // ------------------------------------------------------------------ helpers

  private requireRuntime(name: string): MirrorRuntime {
    const rt = this.runtimes.get(name);
    if (rt === undefined) throw new Error(`mirror ${name} has no usable source connection settings`);
    return rt;
  }

  private tp(key: MirrorPartitionKey): MirrorTopicPartition {
    return { topic: key.topicName, topicId: key.topicId, partition: key.partition };
  }

  private keyFor(mirrorName: string, topicId: string, topicName: string, partition: number): MirrorPartitionKey {
    const ks = `${mirrorName}:${topicId}:${partition}`;
    return this.tracked.get(ks) ?? { mirrorName, topicId, topicName, partition };
  }
}

export type { MirrorPartitionStateValue };
