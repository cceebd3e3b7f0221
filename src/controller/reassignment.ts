/**
 * Partition reassignment (KIP-455, Kafka's ReplicationControlManager / PartitionReassignmentReplicas):
 * the replica set becomes target + the replicas being removed, with the new ones listed as
 * adding; followers catch up and their leader takes them into the ISR (AlterPartition); once
 * every target replica is in the ISR the reassignment completes: replicas = target, the removed
 * ones leave the ISR, and leadership moves if the leader was removed.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { Controller } from './controller.js';
import type { PartitionImage } from './metadata-image.js';
import type { MetadataRecord } from './metadata-records.js';
import { changeRecord } from './partition-ops.js';
import { checkAssignment } from './replica-placement.js';

interface ReassignmentResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export function inProgress(p: PartitionImage): boolean {
  return (p.addingReplicas?.length ?? 0) > 0 || (p.removingReplicas?.length ?? 0) > 0;
}

/** The target of a reassignment in progress (replicas minus those being removed). */
export function reassignmentTarget(p: PartitionImage): number[] {
  return p.replicas.filter((r) => !(p.removingReplicas ?? []).includes(r));
}

/** The replicas before a reassignment in progress (what a cancellation returns to). */
function originalReplicas(p: PartitionImage): number[] {
  return p.replicas.filter((r) => !(p.addingReplicas ?? []).includes(r));
}

/** The change that ends a reassignment at `target`, given the ISR it ends with. */
export function completion(topicId: string, p: PartitionImage, target: readonly number[], isr: readonly number[]): MetadataRecord {
  const newIsr = isr.filter((r) => target.includes(r));
  const leader = target.includes(p.leader) ? p.leader : (target.find((r) => newIsr.includes(r)) ?? -1);
  return { ...changeRecord(topicId, p, { leader, isr: newIsr.length > 0 ? newIsr : [...isr] }), replicas: [...target], addingReplicas: [], removingReplicas: [] };
}

function start(topicId: string, p: PartitionImage, target: readonly number[]): MetadataRecord {
  const base = inProgress(p) ? originalReplicas(p) : p.replicas;
  if (target.every((r) => p.isr.includes(r))) return completion(topicId, p, target, p.isr);
  const adding = target.filter((r) => !base.includes(r));
  const removing = base.filter((r) => !target.includes(r));
  return { ...changeRecord(topicId, p, {}), replicas: [...target, ...removing], addingReplicas: adding, removingReplicas: removing };
}

/** AlterPartitionReassignments: `target` null cancels. One metadata write for the whole request. */
export async function alterReassignments(
  controller: Controller,
  items: readonly { topic: string; partition: number; target: readonly number[] | null }[],
  allowReplicationFactorChange: boolean,
): Promise<ReassignmentResult[] | { errorCode: number; errorMessage: string | null }> {
  let results: ReassignmentResult[] = [];
  const res = await controller.write((img) => {
    results = [];
    const recs: MetadataRecord[] = [];
    for (const { topic, partition, target } of items) {
      const done = (errorCode: number, errorMessage: string | null): void => void results.push({ topic, partition, errorCode, errorMessage });
      const t = img.topicsByName.get(topic);
      const p = t?.partitions[partition];
      if (!t || !p) {
        done(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'The partition does not exist.');
        continue;
      }
      if (target === null) {
        if (!inProgress(p)) {
          done(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, `No ongoing reassignment for partition ${topic}-${partition}.`);
          continue;
        }
        const original = originalReplicas(p);
        recs.push(completion(t.topicId, p, original, p.isr.filter((r) => original.includes(r)).length > 0 ? p.isr : original));
        done(ErrorCode.NONE, null);
        continue;
      }
      const err = checkAssignment([target], (id) => controller.cluster.isLive(id));
      if (err) {
        done(err.errorCode, err.errorMessage);
        continue;
      }
      const base = inProgress(p) ? originalReplicas(p) : p.replicas;
      if (!allowReplicationFactorChange && target.length !== base.length) {
        done(ErrorCode.INVALID_REPLICATION_FACTOR, `The replication factor is changed from ${base.length} to ${target.length}`);
        continue;
      }
      if (!inProgress(p) && target.length === p.replicas.length && target.every((r, i) => r === p.replicas[i])) {
        done(ErrorCode.NONE, null);
        continue;
      }
      recs.push(start(t.topicId, p, target));
      done(ErrorCode.NONE, null);
    }
    return recs;
  });
  return res.errorCode === 0 ? results : { errorCode: res.errorCode, errorMessage: res.errorMessage };
}
