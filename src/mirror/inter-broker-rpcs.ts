/**
 * The mirroring RPCs that brokers and clusters send each other rather than operators (KIP-1279
 * spec §4.3): ReadMirrorStates / WriteMirrorStates (a mirror partition's leader to the
 * `__mirror_state` coordinator), BumpLeaderEpochs (a partition leader to the controller), and the
 * last-mirrored-epoch lookups that a failing-back cluster asks us in DescribeClusterMirrors.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { bumpLeaderEpoch } from './leader-epoch-bump.js';
import type { MirrorCoordinator } from './mirror-coordinator.js';
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S, isMirrorPartitionState } from './mirror-partition-state.js';

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
        for (const m of mirrors) lme = Math.max(lme, (await this.coordinator.read(m, l.topicId, p)).lastMirrorEpoch);
        partitions.push({ partitionIndex: p, lastMirrorEpoch: lme });
      }
      out.push({ topicId: l.topicId, partitions });
    }
    return out;
  }

  async readMirrorStates(mirrorName: string, topics: readonly { name: string; partitions: readonly number[] }[]) {
    const out = [];
    for (const t of topics) {
      const topicId = this.host.topicIdByName(t.name);
      const partitions = [];
      for (const p of t.partitions) {
        if (topicId === undefined) {
          partitions.push({ partitionIndex: p, lastMirrorEpoch: -1, state: S.UNKNOWN, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, previousState: S.UNKNOWN, retryAttempt: 0, errorMessage: null });
          continue;
        }
        const r = await this.coordinator.read(mirrorName, topicId, p);
        partitions.push({
          partitionIndex: p,
          lastMirrorEpoch: r.lastMirrorEpoch,
          state: r.state?.state ?? S.UNKNOWN,
          errorCode: 0,
          previousState: r.state?.previousState ?? S.UNKNOWN,
          retryAttempt: r.state?.retryAttempt ?? 0,
          errorMessage: r.state?.errorMessage ?? null,
        });
      }
      out.push({ name: t.name, partitions });
    }
    return out;
  }

  async writeMirrorStates(mirrorName: string, topics: readonly { name: string; partitions: readonly { partitionIndex: number; lastMirrorEpoch: number; state: number }[] }[]) {
    const out = [];
    for (const t of topics) {
      const topicId = this.host.topicIdByName(t.name);
      const partitions = [];
      for (const p of t.partitions) {
        if (topicId === undefined || !isMirrorPartitionState(p.state)) {
          partitions.push({ partitionIndex: p.partitionIndex, errorCode: topicId === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.INVALID_REQUEST, errorMessage: null });
          continue;
        }
        const prev = (await this.coordinator.read(mirrorName, topicId, p.partitionIndex)).state;
        await this.coordinator.write(mirrorName, [
          {
            topicId,
            partition: p.partitionIndex,
            state: { state: p.state, previousState: prev?.state ?? S.UNKNOWN, retryAttempt: prev?.retryAttempt ?? 0, errorMessage: prev?.errorMessage ?? null },
            ...(p.lastMirrorEpoch >= 0 ? { lastMirrorEpoch: p.lastMirrorEpoch } : {}),
          },
        ]);
        partitions.push({ partitionIndex: p.partitionIndex, errorCode: 0, errorMessage: null });
      }
      out.push({ name: t.name, partitions });
    }
    return out;
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
