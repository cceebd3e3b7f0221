/**
 * LOG_TRUNCATION on a replicated mirror partition (KIP-1279 spec §9.3, the reference's
 * ReplicaManager.maybeTruncateForLeaderEpoch and Partition.maybeCompleteTruncation): a log is cut
 * "from the end" consistently across its replicas in two phases.
 *
 * - Guard: the ISR holds at least min.insync.replicas, and with the topic's
 *   `mirror.support.unclean.leader.election=true` every assigned replica (an unclean election may
 *   later pick any of them, so each must have dropped the cut records).
 * - Phase 1: every ISR follower has fetched up to the leader's log end, so none keeps a batch the
 *   leader would then cut in the middle of; the leader truncates.
 * - Followers truncate through their ordinary fetch: the leader answers their fetch past its new
 *   end with DivergingEpoch (or OFFSET_OUT_OF_RANGE) and they cut to where both logs agree.
 * - Phase 2: no relevant follower (the ISR, or every replica with the key set) has a log end
 *   other than the leader's; only then may MIRRORING append new source batches.
 *
 * A partition with one replica (or a node alone) has nothing to wait for. The waits poll the
 * leader's view of its followers, which their fetches keep current, every 100 ms; they end early
 * when the action is superseded, and fail (retryably, the FAILED backoff takes over) after
 * `WAIT_MS` so describe says what the partition waits for.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { MirrorLog } from '../fetcher/mirror-log.js';
import type { MirrorHost, ReplicaProgress } from './mirror-host.js';
import type { MirrorPartitionKey } from './state-machine.js';

const POLL_MS = 100;
const WAIT_MS = 60_000;
/** Say what it waits for every 5 s. */
const LOG_EVERY_POLLS = 50;

interface ReplicaTruncationContext {
  readonly host: MirrorHost;
  readonly key: MirrorPartitionKey;
  readonly log: MirrorLog;
  /** False once the action was superseded or the mirror closed: stop waiting. */
  readonly isCurrent: () => boolean;
  readonly say: (msg: string) => void;
}

/** Why the guard or phase 1 does not hold yet, null when the leader may truncate. */
function notReadyToTruncate(p: ReplicaProgress, nodeId: number, leaderEnd: number): string | null {
  if (p.isr.length < p.minInsyncReplicas) return `the ISR (${p.isr.join(',')}) is below min.insync.replicas=${p.minInsyncReplicas}`;
  if (p.supportUncleanLeaderElection) {
    const out = p.replicas.filter((r) => !p.isr.includes(r));
    if (out.length > 0) return `replicas ${out.join(',')} are not in the ISR (mirror.support.unclean.leader.election=true)`;
  }
  const behind = p.isr.filter((r) => r !== nodeId && (p.followerLogEnds.get(r) ?? -1) < leaderEnd);
  return behind.length > 0 ? `ISR followers ${behind.join(',')} have not caught up to offset ${leaderEnd}` : null;
}

/** Why phase 2 does not hold yet, null when every relevant follower ends where the leader does. */
function notDoneTruncating(p: ReplicaProgress, nodeId: number, leaderEnd: number): string | null {
  const relevant = (p.supportUncleanLeaderElection ? p.replicas : p.isr).filter((r) => r !== nodeId);
  const ahead = relevant.filter((r) => (p.followerLogEnds.get(r) ?? -1) !== leaderEnd);
  return ahead.length > 0 ? `followers ${ahead.join(',')} have not truncated to offset ${leaderEnd}` : null;
}

async function waitUntil(ctx: ReplicaTruncationContext, check: (p: ReplicaProgress, leaderEnd: number) => string | null): Promise<boolean> {
  const { host, key, log } = ctx;
  const deadline = host.clock.now() + WAIT_MS;
  for (let polls = 1; ; polls++) {
    if (!ctx.isCurrent()) return false;
    const progress = host.replicaProgress?.(key.topicName, key.partition);
    const why = progress === undefined ? null : check(progress, log.logEndOffset);
    if (why === null) return true;
    if (polls % LOG_EVERY_POLLS === 0) ctx.say(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: LOG_TRUNCATION is waiting: ${why}`);
    if (host.clock.now() >= deadline) throw new KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS, `LOG_TRUNCATION of ${key.topicName}-${key.partition} waited ${WAIT_MS / 1000} s: ${why}`);
    await new Promise<void>((r) => host.timers.schedule(POLL_MS, r));
  }
}

/** Guard and phase 1; false when superseded meanwhile. */
export function awaitReadyToTruncate(ctx: ReplicaTruncationContext): Promise<boolean> {
  return waitUntil(ctx, (p, end) => notReadyToTruncate(p, ctx.host.nodeId, end));
}

/** Phase 2; false when superseded meanwhile. */
export function awaitFollowersTruncated(ctx: ReplicaTruncationContext): Promise<boolean> {
  return waitUntil(ctx, (p, end) => notDoneTruncating(p, ctx.host.nodeId, end));
}
