/**
 * A failback after the final stop: the old source becomes a mirror of the old destination. Its
 * log (what the source holds) is cut by the real LOG_TRUNCATION action (MirrorStateActions, with
 * the last mirrored epoch the stopped destination persisted as the source's answer to the
 * lookup), then by the follower's rule of the fetcher's epoch truncation (KIP-279: ask the new
 * source where its own latest epoch ends, cut to the smaller end; the real fetcher does this, the
 * simulation's stand-in does not), then copies the new source's batches from its log end. Checked:
 * once cut, it is a byte prefix of the new source's log (nothing of the old history is kept where
 * the new one differs), and once copied the two logs are equal.
 */
import type { MirrorHost } from '../../../src/mirror/mirror-host.js';
import { MirrorPartitionState as S, mirrorStateName } from '../../../src/mirror/mirror-partition-state.js';
import type { MirrorRuntime } from '../../../src/mirror/mirror-runtime.js';
import type { MirrorStateClient } from '../../../src/mirror/mirror-state-client.js';
import { MirrorStateActions } from '../../../src/mirror/state-actions.js';
import type { ActionRun, MirrorStateMachine } from '../../../src/mirror/state-machine.js';
import { SimLog } from './sim-log.js';
import { MIRROR, SOURCE_CLUSTER_ID } from './world.js';

/** The old source's partition log failed back onto `newSource`; violations found (empty: converged). */
export async function failBack(where: string, topicId: string, partition: number, oldSourceBatches: readonly Buffer[], newSource: SimLog, lastMirroredEpoch: number): Promise<string[]> {
  const log = new SimLog();
  for (const b of oldSourceBatches) await log.appendAsMirror(b);
  const topicName = where.slice(0, where.lastIndexOf('-'));
  const host = {
    clusterId: SOURCE_CLUSTER_ID,
    nodeId: 1,
    clock: { now: () => 0 },
    timers: { schedule: (_ms: number, fn: () => void) => (queueMicrotask(fn), () => undefined), monotonicNow: () => 0 },
    partitionLog: () => log,
    leaderEpoch: () => log.latestEpoch,
    isLocalLeader: () => true,
  } as unknown as MirrorHost;
  const runtime = {
    lookups: {
      hasMirrorLoop: async () => false,
      // DescribeClusterMirrors on the new source, asking with the old source's cluster id.
      lastMirrorEpoch: async (clusterId: string) => (clusterId === SOURCE_CLUSTER_ID ? lastMirroredEpoch : -1),
    },
  } as unknown as MirrorRuntime;
  const coordinator = {
    read: async () => ({ state: null, lastMirrorEpoch: -1 }),
    write: async () => undefined,
  } as unknown as MirrorStateClient;
  const actions = new MirrorStateActions({ host, coordinator, log: () => undefined, runtime: () => runtime, isClosed: () => false, syncGroups: async () => undefined, syncConfigs: async () => undefined });
  let next: number | null = null;
  const machine = {
    leaderEpochOf: () => log.latestEpoch,
    noteLeaderEpoch: () => undefined,
    transition: async (_k: unknown, to: number) => {
      next = to;
    },
  } as unknown as MirrorStateMachine;
  const run: ActionRun = { isCurrent: () => true, exclusive: (step) => step() };
  const key = { mirrorName: `${MIRROR}-back`, topicId, topicName, partition };
  await actions.table()[S.LOG_TRUNCATION]!(key, machine, run);
  const out: string[] = [];
  if (next !== S.MIRRORING) return [`failback of ${where}: LOG_TRUNCATION went to ${next === null ? 'nothing' : mirrorStateName(next)}, not MIRRORING`];

  // The fetcher's first round: the new source says where the follower's latest epoch ends there.
  const latest = log.latestEpoch;
  if (latest >= 0) {
    const there = newSource.endOffsetForEpoch(latest);
    let target = there.epoch < 0 ? 0 : there.endOffset;
    if (there.epoch >= 0 && there.epoch < latest) target = Math.min(target, log.endOffsetForEpoch(there.epoch).endOffset);
    if (target < log.logEndOffset) await log.truncateTo(target);
  }
  const diverged = log.batches.find((b, i) => !b.bytes.equals(newSource.batches[i]?.bytes ?? Buffer.alloc(0)) || newSource.batches[i]!.baseOffset !== b.baseOffset);
  if (diverged !== undefined) {
    out.push(`failback of ${where} (last mirrored epoch ${lastMirroredEpoch}): once truncated to ${log.logEndOffset}, the old source keeps its batch at ${diverged.baseOffset} (epoch ${diverged.epoch}), which the new source does not have there`);
    return out;
  }
  for (const b of newSource.batches.slice(log.batches.length)) {
    const r = await log.appendAsMirror(b.bytes);
    if (r.errorCode !== 0) return [...out, `failback of ${where}: the copy of offset ${b.baseOffset} failed (${r.errorMessage ?? r.errorCode})`];
  }
  if (log.logEndOffset !== newSource.logEndOffset) out.push(`failback of ${where}: the logs end at ${log.logEndOffset} and ${newSource.logEndOffset}`);
  return out;
}
