/**
 * The mirroring RPCs that brokers and clusters send each other rather than operators (KIP-1279
 * spec §4.3): ReadMirrorStates / WriteMirrorStates (a mirror partition's leader to the
 * `__mirror_state` coordinator), BumpLeaderEpochs (a partition leader to the controller), and the
 * last-mirrored-epoch lookups that a failing-back cluster asks us in DescribeClusterMirrors.
 *
 * A ReadMirrorStates or WriteMirrorStates carries the calls of many partitions (their leaders
 * gather them, ./gathered-state-requests.ts): its partitions are read and written side by side,
 * so the coordinator runtime appends the writes queued on one shard as one batch, and a call of a
 * partition that the request carries twice runs after the one before it.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { bumpLeaderEpoch } from './leader-epoch-bump.js';
import { NOTHING_MIRRORED, type MirrorCoordinator } from './mirror-coordinator.js';
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S, isMirrorPartitionState } from './mirror-partition-state.js';
import type { WriteMirrorStatesRequestTopicMetadata } from '../protocol/generated/messages/write-mirror-states-request.js';

/**
 * `fn` over every partition of every topic at once, a partition's calls one after another;
 * answers in request order.
 */
async function perPartition<T extends { readonly name: string }, P, R>(topics: readonly T[], partitionsOf: (t: T) => readonly P[], indexOf: (p: P) => number, fn: (t: T, p: P) => Promise<R>): Promise<{ name: string; partitions: R[] }[]> {
  const tails = new Map<string, Promise<unknown>>();
  return Promise.all(
    topics.map(async (t) => ({
      name: t.name,
      partitions: await Promise.all(
        partitionsOf(t).map((p) => {
          const k = `${t.name}\u0000${indexOf(p)}`;
          const run = (tails.get(k) ?? Promise.resolve()).then(() => fn(t, p));
          tails.set(k, run.catch(() => undefined));
          return run;
        }),
      ),
    })),
  );
}

export class MirrorInterBrokerRpcs {
  constructor(
    private readonly host: MirrorHost,
    private readonly coordinator: MirrorCoordinator,
  ) {}

  /** LME lookups for a requesting cluster (direct failback, spec §4.3 DescribeClusterMirrors). */
  async lookupLastMirrorEpochs(clusterId: string, lookups: readonly { topicId: string; partitions: readonly number[] }[]) {
    const mirrors = [...this.host.mirrorConfigs()].filter(([, cfg]) => cfg.get('mirror.source.cluster.id') === clusterId).map(([n]) => n);
    const out: { topicId: string; partitions: { partitionIndex: number; lastMirrorEpoch: number }[] }[] = [];
    for (const l of lookups) {
      const partitions: { partitionIndex: number; lastMirrorEpoch: number }[] = [];
      for (const p of l.partitions) {
        let lme = -1;
        for (const m of mirrors) {
          // On a cluster each broker answers for the shards it serves; the asker takes the max.
          if (!this.coordinator.runtime.serves(this.coordinator.partitionFor(m, l.topicId, p))) continue;
          lme = Math.max(lme, (await this.coordinator.read(m, l.topicId, p)).lastMirrorEpoch);
        }
        partitions.push({ partitionIndex: p, lastMirrorEpoch: lme });
      }
      out.push({ topicId: l.topicId, partitions });
    }
    return out;
  }

  /**
   * ReadMirrorStates as the coordinator: per partition NOT_COORDINATOR when this node does not
   * serve its `__mirror_state` shard (the asking leader looks the coordinator up again).
   */
  async readMirrorStates(mirrorName: string, topics: readonly { name: string; partitions: readonly number[] }[]) {
    return perPartition(
      topics,
      (t) => t.partitions,
      (p) => p,
      async (t, p) => {
        const failed = (errorCode: number, errorMessage: string | null) => ({ partitionIndex: p, lastMirrorEpoch: -1, state: S.UNKNOWN, errorCode, previousState: S.UNKNOWN, retryAttempt: 0, errorMessage });
        const topicId = this.host.topicIdByName(t.name);
        if (topicId === undefined) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
        try {
          const r = await this.coordinator.read(mirrorName, topicId, p);
          return {
            partitionIndex: p,
            lastMirrorEpoch: r.lastMirrorEpoch,
            state: r.state?.state ?? S.UNKNOWN,
            errorCode: 0,
            previousState: r.state?.previousState ?? S.UNKNOWN,
            retryAttempt: r.state?.retryAttempt ?? 0,
            errorMessage: r.state?.errorMessage ?? null,
          };
        } catch (e) {
          return failed(errorCodeOf(e), (e as Error).message);
        }
      },
    );
  }

  /**
   * WriteMirrorStates as the coordinator, through the same fenced write as a local leader's
   * (MirrorCoordinator.writeFenced): LeaderEpoch older than this image's → FENCED_LEADER_EPOCH;
   * a shard not served here → NOT_COORDINATOR; State UNKNOWN (-1) writes only the last mirrored
   * epoch, since a leader never persists UNKNOWN (-1 there clears it: LOG_TRUNCATION forgets a
   * stop's last mirrored epoch before mirroring again; NOTHING_MIRRORED records a stop that found
   * nothing mirrored). Each partition is answered with its own code.
   */
  async writeMirrorStates(mirrorName: string, topics: readonly WriteMirrorStatesRequestTopicMetadata[]) {
    return perPartition(
      topics,
      (t) => t.partitions,
      (p) => p.partitionIndex,
      async (t, p) => {
        const topicId = this.host.topicIdByName(t.name);
        const lmeOnly = p.state === S.UNKNOWN;
        if (topicId === undefined || !isMirrorPartitionState(p.state) || (lmeOnly && p.lastMirrorEpoch < NOTHING_MIRRORED)) {
          return { partitionIndex: p.partitionIndex, errorCode: topicId === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.INVALID_REQUEST, errorMessage: null };
        }
        const previousState = isMirrorPartitionState(p.previousState) ? p.previousState : S.UNKNOWN;
        try {
          await this.coordinator.writeFenced(mirrorName, [
            {
              topicId,
              partition: p.partitionIndex,
              leaderEpoch: p.leaderEpoch,
              ...(lmeOnly ? {} : { state: { state: p.state, previousState, retryAttempt: p.retryAttempt, errorMessage: p.errorMessage } }),
              ...(p.lastMirrorEpoch >= 0 || lmeOnly ? { lastMirrorEpoch: p.lastMirrorEpoch } : {}),
            },
          ]);
          return { partitionIndex: p.partitionIndex, errorCode: 0, errorMessage: null };
        } catch (e) {
          return { partitionIndex: p.partitionIndex, errorCode: errorCodeOf(e), errorMessage: (e as Error).message };
        }
      },
    );
  }

  async bumpLeaderEpochs(topics: readonly { topicId: string; partitions: readonly { partitionIndex: number; minLeaderEpoch: number }[] }[]) {
    const out = [];
    for (const t of topics) {
      const name = this.host.topicNameById(t.topicId);
      const partitions = [];
      for (const p of t.partitions) {
        if (name === undefined) {
          partitions.push({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: null });
          continue;
        }
        try {
          // A fetcher's request: refused once the topic is being stopped (see bumpLeaderEpoch).
          await bumpLeaderEpoch(this.host, name, t.topicId, p.partitionIndex, p.minLeaderEpoch, { whileMirrored: true });
          partitions.push({ partitionIndex: p.partitionIndex, errorCode: 0, errorMessage: null });
        } catch (e) {
          partitions.push({ partitionIndex: p.partitionIndex, errorCode: errorCodeOf(e), errorMessage: (e as Error).message });
        }
      }
      out.push({ topicName: name ?? '', partitions });
    }
    return out;
  }
}
