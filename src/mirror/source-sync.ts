/**
 * The periodic source sync of every mirror (KIP-1279 spec §10, the MirrorMetadataManager's
 * refresh every `mirror.metadata.refresh.interval.ms`): the source cluster-id check (§10.6),
 * pattern discovery and exclude enforcement (§10.4, §10.5), partition growth (§8.2), group
 * offsets (§10.2), dynamic topic configs (§10.1) and ACLs (§10.3). Each part is best effort: a failed round is logged and
 * retried at the next refresh.
 *
 * Concurrency contract: single event loop; one refresh round at a time (the next is scheduled
 * when the previous one ends).
 */
import { channel } from 'node:diagnostics_channel';
import { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { AclSyncSkip, syncAcls } from './acl-sync.js';
import { syncGroupOffsets } from './group-offset-sync.js';
import { syncShareGroupOffsets } from './share-group-offset-sync.js';
import { followSourceTopics } from './partition-growth.js';
import type { TopicsResult } from './control-results.js';
import { matchesAny, mirrorConfigValue, splitList } from './mirror-config.js';
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S } from './mirror-partition-state.js';
import type { MirrorRuntime } from './mirror-runtime.js';
import { NonRetryableMirrorError, type MirrorPartitionKey, type MirrorStateMachine } from './state-machine.js';
import { syncTopicConfigs } from './topic-config-sync.js';
import { isRefusal } from './sync-refusal.js';
import { errorCodeOf } from '../protocol/kafka-error.js';

/** Failed sync rounds per kind, counted by src/metrics (the channel names are in src/metrics/channels.ts). */
const syncErrorChannel = channel('fjord:mirror-sync-error');

/** What the log says when an ACL sync round is skipped for want of an authorizer. */
const ACL_SKIP_REASONS: Readonly<Partial<Record<AclSyncSkip, string>>> = {
  [AclSyncSkip.SOURCE_SECURITY_DISABLED]: "the source has no authorizer (DescribeAcls answers SECURITY_DISABLED), so there are no ACLs to sync; this node's ACLs are left as they are",
  [AclSyncSkip.DESTINATION_SECURITY_DISABLED]: 'this node has no authorizer (authorizer.class.name is unset), so it cannot hold the source\'s ACLs',
};

/** Starts / stops topics on behalf of pattern discovery (the control plane's Start/Stop). */
interface TopicDiscovery {
  start(mirror: string, topics: string[]): Promise<TopicsResult>;
  stop(mirror: string, topics: string[]): Promise<TopicsResult>;
}

interface SourceSyncDeps {
  readonly host: MirrorHost;
  readonly machine: MirrorStateMachine;
  readonly log: (msg: string) => void;
  /** Logged at WARN: what an operator should look at. */
  readonly warn: (msg: string) => void;
  runtimes(): readonly MirrorRuntime[];
  trackedKeys(): Iterable<MirrorPartitionKey>;
  isClosed(): boolean;
  /** Whether this node runs the mirror's refresh (one owner per mirror). */
  ownsMirror(mirrorName: string): boolean;
}

export class MirrorSourceSync {
  /** Set by the control plane once it exists. */
  topicDiscovery: TopicDiscovery | null = null;
  private selfClient: KafkaClient | null = null;
  /** Per mirror, why its last ACL sync round was skipped (null: it ran), so a reason is logged once. */
  private readonly aclSkips = new Map<string, AclSyncSkip | null>();

  constructor(private readonly deps: SourceSyncDeps) {}

  /** One refresh round over every mirror. */
  async refreshSources(): Promise<void> {
    const { machine } = this.deps;
    const names = new Set(this.deps.runtimes().map((rt) => rt.name));
    for (const name of this.aclSkips.keys()) if (!names.has(name)) this.aclSkips.delete(name);
    for (const rt of this.deps.runtimes()) {
      if (this.deps.isClosed()) return;
      // The cluster-id check is every node's, for the partitions it leads; the rest of the
      // refresh is the mirror's owner's alone.
      const owner = this.deps.ownsMirror(rt.name);
      let id: string;
      try {
        id = (await rt.client.describeCluster()).clusterId;
      } catch {
        if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'metadata_refresh' });
        continue; // unreachable sources are the fetcher's business
      }
      if (rt.sourceClusterId !== null && id !== rt.sourceClusterId) {
        // A changed source cluster id fails the mirror for good (misconfiguration or a replaced cluster).
        for (const key of [...this.deps.trackedKeys()]) {
          if (key.mirrorName !== rt.name) continue;
          const st = machine.state(key);
          if (st === S.STOPPED || st === S.PAUSED) continue;
          await machine.fail(key, new NonRetryableMirrorError(ErrorCode.INCONSISTENT_CLUSTER_ID, `The source cluster id changed from ${rt.sourceClusterId} to ${id}.`));
        }
        continue;
      }
      if (!owner) continue;
      await this.discoverAndExclude(rt).catch((err: unknown) => this.deps.log(`mirror ${rt.name}: topic discovery failed: ${(err as Error).message}`));
      const live = await this.followPartitions(rt);
      if (live !== null) {
        await this.syncGroups(rt, live);
        await this.syncConfigs(rt, [...live]);
      }
      await this.syncAclsOf(rt);
    }
  }

  /**
   * Best effort ACL sync (spec §10.3). A side without an authorizer is a configuration, not a
   * failure: the round is skipped, its reason logged when it first appears, and nothing counted.
   */
  private async syncAclsOf(rt: MirrorRuntime): Promise<void> {
    try {
      const r = await syncAcls(rt.name, this.deps.host, rt.client, this.self());
      if (r.created + r.deleted > 0) this.deps.log(`mirror ${rt.name}: ACL sync created ${r.created}, deleted ${r.deleted}`);
      const before = this.aclSkips.get(rt.name);
      this.aclSkips.set(rt.name, r.skipped);
      if (r.skipped !== before) {
        const why = r.skipped === null ? undefined : ACL_SKIP_REASONS[r.skipped];
        if (why !== undefined) this.deps.log(`mirror ${rt.name}: ACL sync skipped: ${why}`);
      }
    } catch (err) {
      if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'acls' });
      this.failed(rt.name, 'ACL sync', err);
    }
  }

  /**
   * Best effort partition growth (spec §8.2 step 7): new source partitions are added here.
   * Returns the topics whose source still has our topic id, null when the source could not say.
   */
  private async followPartitions(rt: MirrorRuntime): Promise<ReadonlySet<string> | null> {
    try {
      const round = await followSourceTopics(rt.name, this.deps.host, rt.client, this.self());
      for (const g of round.grown) {
        if (g.errorCode === ErrorCode.NONE) this.deps.log(`mirror ${rt.name}: topic ${g.topic} grew from ${g.from} to ${g.to} partitions on the source; added them here`);
        else this.deps.log(`mirror ${rt.name}: could not add partitions ${g.from}..${g.to - 1} of ${g.topic} (error ${g.errorCode}): ${g.errorMessage ?? ''}`);
      }
      return round.live;
    } catch (err) {
      if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'metadata_refresh' });
      this.deps.log(`mirror ${rt.name}: source topic metadata failed: ${(err as Error).message}`);
      return null;
    }
  }

  /** Best effort topic config sync (spec §10.1); `topics` limits it to a topic that just started. */
  async syncConfigs(rt: MirrorRuntime, topics?: string[]): Promise<void> {
    try {
      const n = await syncTopicConfigs(rt.name, this.deps.host, rt.client, this.self(), topics);
      if (n > 0) this.deps.log(`mirror ${rt.name}: synced ${n} topic config values`);
    } catch (err) {
      if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'topic_configs' });
      this.failed(rt.name, 'topic config sync', err);
    }
  }

  /**
   * Best effort group offset sync (spec §10.2): consumer groups, then share groups, listed
   * separately; `topics` limits it to a topic being stopped.
   */
  async syncGroups(rt: MirrorRuntime, topics?: ReadonlySet<string>): Promise<void> {
    try {
      const r = await syncGroupOffsets(rt.name, this.deps.host, rt.client, this.self(), topics);
      if (r.committed > 0) this.deps.log(`mirror ${rt.name}: synced ${r.committed} group offsets (${r.groups} groups, ${r.skippedActive} active here skipped)`);
    } catch (err) {
      if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'group_offsets' });
      this.failed(rt.name, 'group offset sync', err);
    }
    try {
      const r = await syncShareGroupOffsets(rt.name, this.deps.host, rt.client, this.self(), topics);
      if (r.committed > 0) this.deps.log(`mirror ${rt.name}: synced ${r.committed} share group start offsets (${r.groups} share groups)`);
      for (const g of r.skippedActive) this.deps.warn(`mirror ${rt.name}: share group ${g} has members here; its start offsets are not synced`);
    } catch (err) {
      if (syncErrorChannel.hasSubscribers) syncErrorChannel.publish({ mirror: rt.name, kind: 'group_offsets' });
      this.failed(rt.name, 'share group offset sync', err);
    }
  }

  /** A refusal by this node's own authorizer needs the operator (a warning); anything else is retried at the next refresh. */
  private failed(mirrorName: string, what: string, err: unknown): void {
    const msg = `mirror ${mirrorName}: ${what} failed: ${(err as Error).message}`;
    if (isRefusal(errorCodeOf(err))) this.deps.warn(msg);
    else this.deps.log(msg);
  }

  close(): void {
    this.selfClient?.close();
    this.selfClient = null;
  }

  /** A client to this node's own listener, for group offset commits (the reference's destination Admin). */
  private self(): KafkaClient {
    const { host } = this.deps;
    this.selfClient ??= new KafkaClient({ ...host.interBrokerSecurity, bootstrapServers: [`${host.host}:${host.port}`], clientId: 'fjord-mirror-groups', requestTimeoutMs: 10_000 });
    return this.selfClient;
  }

  /**
   * Pattern discovery and exclude enforcement (spec §10.4, §10.5): source topics matching
   * `mirror.topics.include` and not `mirror.topics.exclude` that no mirror has bound yet are
   * started; active topics of this mirror that now match the exclude list are stopped.
   */
  private async discoverAndExclude(rt: MirrorRuntime): Promise<void> {
    const { host } = this.deps;
    const discovery = this.topicDiscovery;
    const cfg = host.mirrorConfigs().get(rt.name);
    if (discovery === null || cfg === undefined) return;
    const include = splitList(cfg.get('mirror.topics.include'));
    const exclude = splitList(mirrorConfigValue(cfg, 'mirror.topics.exclude'));
    const bindings = host.mirrorTopicBindings();
    const excluded = bindings.filter((b) => b.mirrorName === rt.name && b.desiredState !== S.STOPPED && matchesAny(b.topicName, exclude)).map((b) => b.topicName);
    if (excluded.length > 0) this.logRefused(rt.name, 'stopped', await discovery.stop(rt.name, excluded));
    if (include.length === 0) return;
    const bound = new Set(bindings.map((b) => b.topicName));
    const md = await rt.client.metadata(null);
    const fresh = md.topics
      .filter((t) => t.errorCode === 0 && t.name !== null && !t.isInternal)
      .map((t) => t.name as string)
      .filter((n) => !bound.has(n) && matchesAny(n, include) && !matchesAny(n, exclude));
    if (fresh.length > 0) this.logRefused(rt.name, 'started', await discovery.start(rt.name, fresh));
  }

  /** Topics are applied one by one; the ones refused are tried again at the next refresh. */
  private logRefused(mirrorName: string, what: string, r: TopicsResult): void {
    for (const t of r.topics) {
      if (t.errorCode !== 0) this.deps.log(`mirror ${mirrorName}: topic ${t.name} could not be ${what} (error ${t.errorCode}): ${t.errorMessage ?? ''}`);
    }
  }
}
