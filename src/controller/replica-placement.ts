/**
 * Replica placement for new partitions, after Kafka's StripedReplicaPlacer: brokers are ordered
 * so that consecutive ones sit on different racks (when `broker.rack` is set), a random start is
 * drawn once per call, and partition p takes `rf` consecutive brokers from position start + p.
 * The first replica is the preferred leader, so leadership spreads like the replicas do.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { BrokerRegistration } from './cluster-view.js';

interface PlacementError {
  readonly errorCode: number;
  readonly errorMessage: string;
}

/** Interleaves racks: r1-a, r2-a, r3-a, r1-b, ... (brokers without a rack count as one rack). */
function rackAlternating(brokers: readonly BrokerRegistration[]): number[] {
  const byRack = new Map<string, number[]>();
  for (const b of [...brokers].sort((x, y) => x.nodeId - y.nodeId)) {
    const k = b.rack ?? '';
    let l = byRack.get(k);
    if (!l) byRack.set(k, (l = []));
    l.push(b.nodeId);
  }
  const racks = [...byRack.keys()].sort().map((k) => byRack.get(k)!);
  const out: number[] = [];
  for (let i = 0; out.length < brokers.length; i++) for (const r of racks) if (i < r.length) out.push(r[i]!);
  return out;
}

/** Kafka's message when too few brokers are registered (StripedReplicaPlacer / ClusterDescriber). */
function notEnoughBrokers(rf: number, live: number): PlacementError {
  return {
    errorCode: ErrorCode.INVALID_REPLICATION_FACTOR,
    errorMessage: `Unable to replicate the partition ${rf} time(s): The target replication factor of ${rf} cannot be reached because only ${live} broker(s) are registered.`,
  };
}

export function placeReplicas(
  firstPartition: number,
  numPartitions: number,
  rf: number,
  brokers: readonly BrokerRegistration[],
  random: () => number = Math.random,
): number[][] | PlacementError {
  if (rf <= 0) return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: 'Replication factor must be larger than 0, or -1 to use the default value.' };
  if (rf > brokers.length) return notEnoughBrokers(rf, brokers.length);
  const order = rackAlternating(brokers);
  const n = order.length;
  const start = Math.floor(random() * n);
  // Later replicas shift by one every n partitions (Kafka's replica shift), so a broker's
  // followers are not always the same brokers.
  const shift = Math.floor(random() * n);
  const out: number[][] = [];
  for (let i = 0; i < numPartitions; i++) {
    const p = firstPartition + i;
    const first = (start + p) % n;
    const replicas = [order[first]!];
    const step = 1 + ((shift + Math.floor(p / n)) % Math.max(1, n - 1));
    for (let j = 1; j < rf; j++) {
      let idx = (first + j * step) % n;
      while (replicas.includes(order[idx]!)) idx = (idx + 1) % n;
      replicas.push(order[idx]!);
    }
    out.push(replicas);
  }
  return out;
}

/** Checks an explicit assignment: distinct, live broker ids, the same count for every partition. */
export function checkAssignment(assignment: readonly (readonly number[])[], isLive: (id: number) => boolean): PlacementError | null {
  let rf = -1;
  for (const replicas of assignment) {
    if (replicas.length === 0) return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: 'The manual partition assignment includes an empty replica list.' };
    if (new Set(replicas).size !== replicas.length) return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: `The manual partition assignment includes duplicate replicas: ${replicas.join(', ')}.` };
    if (rf !== -1 && replicas.length !== rf) return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: 'The manual partition assignment includes partitions with different replication factors.' };
    rf = replicas.length;
    const dead = replicas.find((b) => !isLive(b));
    if (dead !== undefined) return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: `The manual partition assignment includes broker ${dead}, but no such broker is registered.` };
  }
  return null;
}
