/**
 * Leader and ISR decisions of the active controller, as pure functions of one partition's image
 * (Kafka's PartitionChangeBuilder and ReplicationControlManager rules):
 * - a broker that is gone (or shutting down) leaves every ISR, unless it is the last member;
 * - a partition whose leader is gone gets the first ISR member that is still eligible, in replica
 *   order; with none, leader -1 and the last ISR kept (so the last leader can come back), unless
 *   unclean election allows the first eligible replica outside the ISR;
 * - a leaderless partition whose ISR member returns is led by it again.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { PartitionImage } from './metadata-image.js';

export interface PartitionChange {
  readonly leader?: number;
  readonly isr?: readonly number[];
}

interface ElectionFailure {
  readonly errorCode: number;
  readonly errorMessage: string;
}

const same = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** What must change after brokers came or went; null when nothing. */
export function reconcilePartition(p: PartitionImage, eligible: (id: number) => boolean, uncleanAllowed: boolean): PartitionChange | null {
  const liveIsr = p.isr.filter(eligible);
  if (p.leader >= 0 && eligible(p.leader)) {
    return same(liveIsr, p.isr) ? null : { isr: liveIsr };
  }
  const leader = p.replicas.find((r) => liveIsr.includes(r));
  if (leader !== undefined) return { leader, isr: liveIsr };
  if (uncleanAllowed) {
    const unclean = p.replicas.find(eligible);
    if (unclean !== undefined) return { leader: unclean, isr: [unclean] };
  }
  if (p.leader === -1) return null;
  // The last ISR stays as it was: only one of its members may lead again without losing data.
  return { leader: -1 };
}

/** PREFERRED election (ElectLeaders type 0, and auto.leader.rebalance.enable). */
export function preferredElection(p: PartitionImage, eligible: (id: number) => boolean): PartitionChange | ElectionFailure {
  const preferred = p.replicas[0];
  if (preferred === undefined) return { errorCode: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, errorMessage: 'The partition has no replicas.' };
  if (p.leader === preferred) return { errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' };
  if (!eligible(preferred) || !p.isr.includes(preferred)) {
    return { errorCode: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, errorMessage: `Failed to elect leader for partition ${p.partition} under strategy PreferredReplicaPartitionLeaderElectionStrategy` };
  }
  return { leader: preferred };
}

/** UNCLEAN election (ElectLeaders type 1): only for a partition without a live leader. */
export function uncleanElection(p: PartitionImage, eligible: (id: number) => boolean): PartitionChange | ElectionFailure {
  if (p.leader >= 0 && eligible(p.leader)) return { errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' };
  const clean = p.replicas.find((r) => eligible(r) && p.isr.includes(r));
  if (clean !== undefined) return { leader: clean, isr: p.isr.filter(eligible) };
  const unclean = p.replicas.find(eligible);
  if (unclean === undefined) return { errorCode: ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, errorMessage: `Failed to elect leader for partition ${p.partition} under strategy UncleanLeaderElectionStrategy` };
  return { leader: unclean, isr: [unclean] };
}

export function isFailure(x: PartitionChange | ElectionFailure): x is ElectionFailure {
  return 'errorCode' in x;
}
