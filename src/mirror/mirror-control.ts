/**
 * The operator RPCs of cluster mirroring (KIP-1279 spec §4): CreateClusterMirror, Start/Stop/
 * Pause/Resume MirrorTopics, DeleteClusterMirror, List/DescribeClusterMirrors. A Fjord node is
 * its own controller, so each call does both halves of the reference's flow in one place: the
 * broker-side validation of actual partition states (INVALID_CLUSTER_MIRROR_STATES; on a cluster
 * read from each partition's mirror coordinator, wherever it runs), then the
 * controller-side checks and the metadata records, including the optimistic
 * StateValidationOffset check (spec §4.2). The inter-broker RPCs are ./inter-broker-rpcs.ts, the
 * CLUSTER_MIRROR config resource ./mirror-config-resource.ts.
 *
 * Concurrency contract: single event loop. Calls that change metadata are serialised through the
 * one ControlQueue, so validation and the write it depends on are not interleaved with another call.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { clientOptionsFromConfig } from '../client/client-options.js';
import { KafkaClient } from '../client/kafka-client.js';
import type { ControlQueue } from './control-queue.js';
import { allFail, err, ok, topLevel, type TopicResult, type TopicsResult, type TopLevelResult } from './control-results.js';
import { matchesAny, validateMirrorConfigEntry, validateMirrorConnection, validateMirrorName } from './mirror-config.js';
import type { MirrorControllerOp, MirrorHost, MirrorTopicBinding } from './mirror-host.js';
import type { MirrorManager, PartitionDescription } from './mirror-manager.js';
import { MirrorPartitionState as S, mirrorStateName, type MirrorPartitionStateValue } from './mirror-partition-state.js';
import { decidePause, decideResume, decideStart, decideStop, movePatterns, staleAgainst } from './desired-state-rules.js';
import { mapConcurrently, writeGathered } from './gathered-writes.js';
import { hasMirrorLoop } from './source-lookups.js';
import { fillSourceTimestamps } from './time-lag.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
/** Topics whose source lookups or partition-state reads one request has in flight at once. */
const LOOKUPS_IN_FLIGHT = 16;

export class MirrorControlPlane {
  constructor(
    private readonly host: MirrorHost,
    private readonly manager: MirrorManager,
    private readonly queue: ControlQueue,
  ) {}

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.serial(fn);
  }

  private write(ops: MirrorControllerOp[]): Promise<TopLevelResult> {
    return this.queue.write(ops);
  }

  /** Topics' changes gathered into few metadata writes, then one wait for the local reconcile. */
  private async writeTopics(groups: readonly (readonly MirrorControllerOp[])[]): Promise<TopLevelResult[]> {
    const written = await writeGathered(groups, (ops) => this.queue.writeOnly(ops));
    if (written.some((w) => w.errorCode === 0)) await this.queue.settle();
    return written;
  }

  private binding(topic: string): MirrorTopicBinding | undefined {
    return this.host.mirrorTopicBinding(topic);
  }

  // ------------------------------------------------------------------ create

  createClusterMirror(name: string, configs: readonly { name: string; value: string | null }[]): Promise<TopLevelResult> {
    return this.serial(async () => {
      const bad = validateMirrorName(name);
      if (bad !== null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: bad };
      if (this.host.mirrorConfigs().has(name)) {
        return { errorCode: ErrorCode.CLUSTER_MIRROR_ALREADY_EXISTS, errorMessage: `cluster mirror ${name} already exists` };
      }
      const cfg = new Map<string, string>();
      for (const c of configs) {
        const problem = validateMirrorConfigEntry(c.name, c.value);
        if (problem !== null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: problem };
        if (c.value !== null) cfg.set(c.name, c.value);
      }
      if (!cfg.has('bootstrap.servers')) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'bootstrap.servers is required' };
      const unusable = validateMirrorConnection(cfg);
      if (unusable !== null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: unusable };
      if (!cfg.has('mirror.source.cluster.id')) {
        // The reference's admin client fills it in; a CLI or client that did not is served too.
        try {
          cfg.set('mirror.source.cluster.id', await this.resolveSourceClusterId(name, cfg));
        } catch (e) {
          return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `mirror.source.cluster.id is absent and the source cluster could not be reached to resolve it: ${(e as Error).message}` };
        }
      }
      if (cfg.get('mirror.source.cluster.id') === this.host.clusterId) {
        return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'the source cluster is this cluster' };
      }
      return this.write([...cfg].map(([k, v]) => ({ type: 'mirrorConfig', mirrorName: name, name: k, value: v })));
    });
  }

  private async resolveSourceClusterId(name: string, cfg: ReadonlyMap<string, string>): Promise<string> {
    const client = new KafkaClient({ ...clientOptionsFromConfig(cfg, `fjord-mirror-${name}`), requestTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
    try {
      const d = await client.describeCluster();
      if (d.errorCode !== 0) throw new KafkaError(d.errorCode, `DescribeCluster error ${d.errorCode}`);
      return d.clusterId;
    } finally {
      client.close();
    }
  }

  // ------------------------------------------------------------------ start

  startMirrorTopics(
    mirrorName: string,
    topics: readonly { topicName: string; topicId: string; numPartitions: number }[],
    includePatterns: readonly string[],
    excludePatterns: readonly string[],
    stateValidationOffset: number,
  ): Promise<TopicsResult> {
    return this.serial(async () => {
      const cfg = this.host.mirrorConfigs().get(mirrorName);
      if (cfg === undefined) return allFail(topics.map((t) => t.topicName), ErrorCode.UNKNOWN_CLUSTER_MIRROR, `unknown cluster mirror ${mirrorName}`);
      // Patterns: include/exclude lists move (spec §4.3); a listed topic is checked against the
      // lists as they will be, and only the topics that were started join `mirror.topics.include`.
      const { exclude } = movePatterns(cfg, [...includePatterns, ...topics.map((t) => escapeRegex(t.topicName))], excludePatterns);
      // Each topic is decided on its own (its source lookups run side by side with the others'),
      // then the started ones are written together (./gathered-writes.ts): one bad topic neither
      // blocks the others nor lets them be answered success without being applied.
      const decided = await mapConcurrently(topics, LOOKUPS_IN_FLIGHT, async (t) => {
        if (matchesAny(t.topicName, exclude)) return { result: err(t.topicName, ErrorCode.INVALID_REQUEST, `topic ${t.topicName} matches mirror.topics.exclude`), ops: [] };
        const ops: MirrorControllerOp[] = [];
        const result = await this.startOne(mirrorName, t, stateValidationOffset, ops);
        return { result, ops: result.errorCode === 0 ? ops : [] };
      });
      const results = decided.map((d) => d.result);
      const toWrite = decided.map((d, i) => ({ i, ops: d.ops })).filter((d) => d.ops.length > 0);
      const written = await this.writeTopics(toWrite.map((d) => d.ops));
      toWrite.forEach((d, k) => {
        const w = written[k];
        if (w !== undefined && w.errorCode !== 0) results[d.i] = err(topics[d.i]!.topicName, w.errorCode, w.errorMessage ?? 'controller write failed');
      });
      const started = topics.filter((_, i) => results[i]?.errorCode === 0).map((t) => escapeRegex(t.topicName));
      if (includePatterns.length + excludePatterns.length + started.length > 0) {
        const w = await this.queue.writeOnly([{ type: 'mirrorTopicLists', mirrorName, include: [...includePatterns, ...started], exclude: excludePatterns, base: cfg }]);
        // The topics are started; only the lists that discovery reads could not be updated.
        if (w.errorCode !== 0) return { ...topLevel(results), errorCode: w.errorCode, errorMessage: `mirror.topics.include/exclude not updated: ${w.errorMessage ?? ''}` };
      }
      return topLevel(results);
    });
  }

  private async startOne(
    mirrorName: string,
    t: { topicName: string; topicId: string; numPartitions: number },
    stateValidationOffset: number,
    ops: MirrorControllerOp[],
  ): Promise<TopicResult> {
    const name = t.topicName;
    let topicId = t.topicId;
    let numPartitions = t.numPartitions;
    if (topicId === ZERO_UUID || numPartitions <= 0) {
      const src = await this.sourceTopic(mirrorName, name).catch((e: unknown) => e as Error);
      if (src instanceof Error) return err(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `cannot describe ${name} on the source: ${src.message}`);
      topicId = src.topicId;
      numPartitions = src.numPartitions;
    }
    const existingId = this.host.topicIdByName(name);
    const b = this.binding(name);
    if (existingId !== undefined && existingId !== topicId) {
      return err(name, ErrorCode.INCONSISTENT_TOPIC_ID, `topic ${name} exists here with topic id ${existingId}, the source's is ${topicId}; delete the local topic first`);
    }
    const nameOfId = this.host.topicNameById(topicId);
    if (nameOfId !== undefined && nameOfId !== name) return err(name, ErrorCode.TOPIC_ALREADY_EXISTS, `topic id ${topicId} is used by topic ${nameOfId}`);
    // The same rules the metadata write decides again (./desired-state-rules.ts).
    const decided = decideStart(mirrorName, b);
    if (typeof decided === 'object' && decided.code === ErrorCode.TOPIC_ALREADY_IN_CLUSTER_MIRROR) return err(name, decided.code, decided.msg);
    const stale = staleAgainst(b, stateValidationOffset);
    if (stale !== null) return err(name, stale.code, stale.msg);
    if (decided === 'noop') return ok(name);
    if (typeof decided === 'object') return err(name, decided.code, decided.msg);
    if (await this.mirrorsBackFromUs(mirrorName, name)) {
      return err(name, ErrorCode.TOPIC_ALREADY_IN_CLUSTER_MIRROR, `Detected mirror loop: the source cluster mirrors ${name} from this cluster (${this.host.clusterId}); stop that mirror first`);
    }
    if (existingId !== undefined) {
      const bad = await this.manager.firstBadState(b?.mirrorName ?? mirrorName, name, topicId, (s) => s !== S.STOPPED && s !== S.UNKNOWN);
      if (bad !== null) return err(name, ErrorCode.INVALID_CLUSTER_MIRROR_STATES, `a partition of ${name} is ${mirrorStateName(bad)}`);
      const have = this.host.partitionCount(name) ?? 0;
      if (have !== numPartitions) return err(name, ErrorCode.INVALID_PARTITIONS, `topic ${name} has ${have} partitions here and ${numPartitions} on the source`);
    } else {
      ops.push({ type: 'createTopic', name, topicId, numPartitions, configs: new Map() });
    }
    ops.push({ type: 'mirrorTopicState', topicId, mirrorName, desiredState: S.MIRRORING, guard: { change: 'start', mirrorName, stateValidationOffset } });
    return ok(name);
  }

  private async sourceTopic(mirrorName: string, name: string): Promise<{ topicId: string; numPartitions: number }> {
    const cfg = this.host.mirrorConfigs().get(mirrorName);
    if (cfg === undefined) throw new KafkaError(ErrorCode.UNKNOWN_CLUSTER_MIRROR, `unknown mirror ${mirrorName}`);
    return this.withSourceClient(mirrorName, cfg, async (client) => {
      const md = await client.metadata([name]);
      const t = md.topics.find((x) => x.name === name);
      if (t === undefined || t.errorCode !== 0) throw new KafkaError(t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `error ${t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`);
      return { topicId: t.topicId, numPartitions: t.partitions.length };
    });
  }

  /**
   * The loop check of spec §8.6 2a, asked before the topic is bound: a source that mirrors the
   * topic from this cluster would make it read-only here too. A source that cannot be asked now
   * does not block the start; LOG_TRUNCATION asks again before anything is copied.
   */
  private async mirrorsBackFromUs(mirrorName: string, name: string): Promise<boolean> {
    const cfg = this.host.mirrorConfigs().get(mirrorName);
    if (cfg === undefined) return false;
    return this.withSourceClient(mirrorName, cfg, (client) => hasMirrorLoop(client, this.host.clusterId, name)).catch(() => false);
  }

  /** The mirror's connected source client, or a short-lived one when it has none yet. */
  private async withSourceClient<T>(mirrorName: string, cfg: ReadonlyMap<string, string>, fn: (client: KafkaClient) => Promise<T>): Promise<T> {
    const shared = this.manager.sourceClient(mirrorName);
    const client = shared ?? new KafkaClient(clientOptionsFromConfig(cfg, `fjord-mirror-${mirrorName}`));
    try {
      return await fn(client);
    } finally {
      if (shared === undefined) client.close();
    }
  }

  // ------------------------------------------------------------------ stop / pause / resume

  stopMirrorTopics(mirrorName: string, names: readonly string[], patterns: readonly string[], stateValidationOffset: number): Promise<TopicsResult> {
    return this.changeDesired(mirrorName, names, stateValidationOffset, [S.MIRRORING, S.PAUSED], 'stop', patterns);
  }

  pauseMirrorTopics(mirrorName: string, names: readonly string[], stateValidationOffset: number): Promise<TopicsResult> {
    return this.changeDesired(mirrorName, names, stateValidationOffset, [S.MIRRORING], 'pause');
  }

  resumeMirrorTopics(mirrorName: string, names: readonly string[], stateValidationOffset: number): Promise<TopicsResult> {
    return this.changeDesired(mirrorName, names, stateValidationOffset, [S.PAUSED], 'resume');
  }

  private changeDesired(
    mirrorName: string,
    names: readonly string[],
    stateValidationOffset: number,
    allowedActual: readonly MirrorPartitionStateValue[],
    change: 'stop' | 'pause' | 'resume',
    stopPatterns: readonly string[] = [],
  ): Promise<TopicsResult> {
    return this.serial(async () => {
      const cfg = this.host.mirrorConfigs().get(mirrorName);
      if (cfg === undefined) return allFail(names, ErrorCode.UNKNOWN_CLUSTER_MIRROR, `unknown cluster mirror ${mirrorName}`);
      const results: TopicResult[] = [];
      const candidates: { i: number; b: MirrorTopicBinding; d: MirrorPartitionStateValue }[] = [];
      for (const name of names) {
        const b = this.binding(name);
        if (b === undefined) {
          results.push(
            this.host.topicIdByName(name) === undefined
              ? err(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic ${name}`)
              : err(name, ErrorCode.TOPIC_NOT_IN_CLUSTER_MIRROR, `topic ${name} is not mirrored`),
          );
          continue;
        }
        if (b.mirrorName !== mirrorName) {
          results.push(err(name, ErrorCode.TOPIC_NOT_IN_CLUSTER_MIRROR, `topic ${name} belongs to mirror ${b.mirrorName}`));
          continue;
        }
        const stale = staleAgainst(b, stateValidationOffset);
        if (stale !== null) {
          results.push(err(name, stale.code, stale.msg));
          continue;
        }
        const d = change === 'stop' ? decideStop(b) : change === 'pause' ? decidePause(b) : decideResume(b);
        if (typeof d === 'object') {
          results.push(err(name, d.code, d.msg));
          continue;
        }
        results.push(ok(name));
        if (d !== 'noop') candidates.push({ i: results.length - 1, b, d });
      }
      // Broker-side validation of what the partitions actually are (spec §4.2 step 1), every
      // topic's at once. A partition still on its way (e.g. truncating) is not refused: the state
      // machine applies the new desired state when the step ends. FAILED may always be stopped.
      // A partition STOPPED while its topic's desired state is not (a start has not reached it
      // yet, or it was paused before it did) is on its way too: refused, a start followed by a
      // pause left no command that could move it.
      const transient: readonly MirrorPartitionStateValue[] = [S.UNKNOWN, S.LOG_TRUNCATION, S.EPOCH_FENCING, S.PAUSING, S.FAILED];
      const bads = await mapConcurrently(candidates, LOOKUPS_IN_FLIGHT, (c) =>
        this.manager.firstBadState(mirrorName, c.b.topicName, c.b.topicId, (s) => !allowedActual.includes(s) && !transient.includes(s) && !(c.d === S.STOPPED && s === S.STOPPING) && !(s === S.STOPPED && c.b.desiredState !== S.STOPPED)),
      );
      const toWrite = candidates.filter((c, k) => {
        const bad = bads[k] ?? null;
        if (bad !== null) results[c.i] = err(c.b.topicName, ErrorCode.INVALID_CLUSTER_MIRROR_STATES, `a partition of ${c.b.topicName} is ${mirrorStateName(bad)}`);
        return bad === null;
      });
      // Written together, a few hundred topics per metadata batch (./gathered-writes.ts); each
      // write decides again against the image it lands on (another node may have changed a topic
      // since this node's image was read), and a refused batch is written topic by topic.
      const written = await this.writeTopics(
        toWrite.map((c) => [{ type: 'mirrorTopicState', topicId: c.b.topicId, mirrorName, desiredState: c.d, guard: { change, mirrorName, stateValidationOffset } }]),
      );
      toWrite.forEach((c, k) => {
        const w = written[k];
        if (w !== undefined && w.errorCode !== 0) results[c.i] = err(c.b.topicName, w.errorCode, w.errorMessage ?? 'controller write failed');
      });
      if (stopPatterns.length > 0) {
        // Both: out of the include list, and into the exclude list, so that a broader include
        // pattern still in place does not discover the stopped topics again (spec §4.3).
        const w = await this.queue.writeOnly([{ type: 'mirrorTopicLists', mirrorName, include: [], exclude: stopPatterns, base: cfg }]);
        if (w.errorCode !== 0) return { ...topLevel(results), errorCode: w.errorCode, errorMessage: `mirror.topics.include/exclude not updated: ${w.errorMessage ?? ''}` };
      }
      return topLevel(results);
    });
  }

  // ------------------------------------------------------------------ delete

  deleteClusterMirror(mirrorName: string, stateValidationOffset: number): Promise<TopLevelResult> {
    return this.serial(async () => {
      const cfg = this.host.mirrorConfigs().get(mirrorName);
      if (cfg === undefined) return { errorCode: ErrorCode.UNKNOWN_CLUSTER_MIRROR, errorMessage: `unknown cluster mirror ${mirrorName}` };
      const bound = this.host.mirrorTopicBindings().filter((b) => b.mirrorName === mirrorName);
      for (const b of bound) {
        if (stateValidationOffset >= 0 && b.lastStateChangeOffset > stateValidationOffset) {
          return { errorCode: ErrorCode.INVALID_CLUSTER_MIRROR_STATES, errorMessage: `topic ${b.topicName} changed after offset ${stateValidationOffset}` };
        }
        if (b.desiredState !== S.STOPPED) {
          return { errorCode: ErrorCode.CLUSTER_MIRROR_NOT_EMPTY, errorMessage: `topic ${b.topicName} is ${mirrorStateName(b.desiredState)}; stop every topic first` };
        }
        // Every partition's persisted state must be STOPPED: unbinding a partition still STOPPING
        // would make it writable before its ABORT markers and producer reset are written. A
        // coordinator that does not answer confirms nothing (UNKNOWN), so the delete waits for it.
        const bad = await this.manager.firstBadState(mirrorName, b.topicName, b.topicId, (s) => s !== S.STOPPED);
        if (bad !== null) {
          return {
            errorCode: ErrorCode.INVALID_CLUSTER_MIRROR_STATES,
            errorMessage:
              bad === S.UNKNOWN
                ? `a partition of ${b.topicName} is not known to be STOPPED yet (its state is not persisted or its mirror coordinator did not answer); retry`
                : `a partition of ${b.topicName} is still ${mirrorStateName(bad)}; retry once it is STOPPED`,
          };
        }
      }
      const ops: MirrorControllerOp[] = bound.map((b) => ({
        type: 'mirrorTopicState',
        topicId: b.topicId,
        mirrorName: null,
        desiredState: S.UNKNOWN,
        guard: { change: 'unbind', mirrorName, stateValidationOffset },
      }));
      // A topic started through another node meanwhile refuses the delete rather than stay bound to nothing.
      ops.push({ type: 'mirrorEmptiedOf', mirrorName, topicIds: bound.map((b) => b.topicId) });
      for (const k of cfg.keys()) ops.push({ type: 'mirrorConfig', mirrorName, name: k, value: null });
      const r = await this.host.controllerWrite(ops);
      if (r.errorCode !== 0) return { errorCode: r.errorCode, errorMessage: r.errorMessage ?? null };
      await this.manager.forgetMirror(mirrorName);
      await this.manager.sync();
      return { errorCode: 0, errorMessage: null };
    });
  }

  // ------------------------------------------------------------------ list / describe

  listClusterMirrors(includeTopicNames: boolean): { mirrorName: string; sourceBootstrap: string; sourceClusterId: string; topicCount: number; topicNames: string[] }[] {
    const bindings = this.host.mirrorTopicBindings();
    return [...this.host.mirrorConfigs()].map(([name, cfg]) => {
      const mine = bindings.filter((b) => b.mirrorName === name);
      return {
        mirrorName: name,
        sourceBootstrap: cfg.get('bootstrap.servers') ?? '',
        sourceClusterId: cfg.get('mirror.source.cluster.id') ?? '',
        topicCount: mine.filter((b) => b.desiredState === S.MIRRORING).length,
        topicNames: includeTopicNames ? mine.filter((b) => b.desiredState !== S.STOPPED).map((b) => b.topicName).sort() : [],
      };
    });
  }

  async describeClusterMirrors(names: readonly string[]) {
    const all = [...this.host.mirrorConfigs().keys()];
    const wanted = names.length === 0 ? all : names;
    const described = new Map<string, PartitionDescription[]>();
    const bindings = this.host.mirrorTopicBindings();
    for (const name of wanted) {
      if (!this.host.mirrorConfigs().has(name)) continue;
      const parts = this.manager.describe(name);
      await fillSourceTimestamps(this.manager.sourceClient(name), parts);
      described.set(name, parts);
    }
    return wanted.map((mirrorName) => {
      const parts = described.get(mirrorName);
      if (parts === undefined) return { errorCode: ErrorCode.UNKNOWN_CLUSTER_MIRROR, mirrorName, topics: [] as { topicName: string; desiredState: string | null; partitions: PartitionDescription[] }[] };
      // Every topic bound to the mirror is named with its desired state, also when no partition
      // of it is led here: merged over the nodes, an operator sees every topic's desired state.
      const byTopic = new Map<string, { desiredState: string | null; partitions: PartitionDescription[] }>();
      for (const b of bindings) if (b.mirrorName === mirrorName) byTopic.set(b.topicName, { desiredState: mirrorStateName(b.desiredState), partitions: [] });
      for (const p of parts) {
        let t = byTopic.get(p.topic);
        if (t === undefined) byTopic.set(p.topic, (t = { desiredState: null, partitions: [] }));
        t.partitions.push(p);
      }
      return { errorCode: 0, mirrorName, topics: [...byTopic].map(([topicName, t]) => ({ topicName, desiredState: t.desiredState, partitions: t.partitions })) };
    });
  }
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
