/**
 * Controller writes that change partitions' leaders, ISRs and replicas: the active controller's
 * reaction to brokers coming and going, ElectLeaders, and AlterPartition from partition leaders.
 * Each is validated against the image at the metadata log's last offset and written as
 * PartitionChangeRecords (Kafka's ReplicationControlManager).
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { FAIL, type Controller, type ControllerResult } from './controller.js';
import type { MetadataImage, PartitionImage, TopicImage } from './metadata-image.js';
import type { MetadataRecord } from './metadata-records.js';
import { completion, inProgress, reassignmentTarget } from './reassignment.js';
import { isFailure, preferredElection, reconcilePartition, uncleanElection, type PartitionChange } from './partition-elections.js';

export type PartitionChangeRecord = Extract<MetadataRecord, { type: 'partitionChange' }>;

/** A PartitionChangeRecord; a new leader gets the next leader epoch, written explicitly. */
export function changeRecord(topicId: string, p: PartitionImage, change: PartitionChange & { readonly replicas?: readonly number[] }): PartitionChangeRecord {
  const leaderChanges = change.leader !== undefined && change.leader !== p.leader;
  return {
    type: 'partitionChange',
    topicId,
    partition: p.partition,
    leaderEpoch: leaderChanges ? p.leaderEpoch + 1 : -1,
    ...(leaderChanges ? { leader: change.leader! } : {}),
    ...(change.isr ? { isr: change.isr } : {}),
    ...(change.replicas ? { replicas: change.replicas } : {}),
  };
}

/**
 * Partition changes per metadata batch. A cluster's batch is one etcd transaction with one put
 * per record, and etcd refuses a transaction of more than 128 operations (its default
 * `--max-txn-ops`): a node leading a few hundred partitions that was lost, or a rebalance of as
 * many, must be written as several batches, or none of its partitions gets a new leader.
 */
const PARTITION_CHANGES_PER_WRITE = 100;

/**
 * The active controller's pass over every partition after brokers came or went: fence the gone
 * ones out of ISRs and leadership, give leaderless partitions a returning ISR member. Written
 * PARTITION_CHANGES_PER_WRITE partitions at a time, each batch decided against the image the
 * previous one left.
 */
export async function reconcileLeadership(controller: Controller, uncleanAllowed: (topic: TopicImage) => boolean): Promise<ControllerResult> {
  const cluster = controller.cluster;
  // A node that may still be on its way back keeps its place until its grace has passed.
  const eligible = (id: number): boolean => cluster.isEligible(id) || cluster.awaitingReturn?.(id) === true;
  for (;;) {
    let more = false;
    const r = await controller.write(
      (img) => {
        more = false;
        const recs: MetadataRecord[] = [];
        for (const t of img.topicsByName.values()) {
          const unclean = uncleanAllowed(t);
          for (const p of t.partitions) {
            const change = reconcilePartition(p, eligible, unclean);
            if (!change) continue;
            if (recs.length === PARTITION_CHANGES_PER_WRITE) {
              more = true;
              return recs;
            }
            recs.push(changeRecord(t.topicId, p, change));
          }
        }
        return recs;
      },
      { asController: true },
    );
    if (r.errorCode !== 0 || !more) return r;
  }
}

interface ElectionResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/**
 * ElectLeaders: type 0 PREFERRED, 1 UNCLEAN; `partitions` null = every partition (Kafka's rule).
 * Any node may run an operator's election (validated at the last offset by the log's CAS);
 * `asController` fences the periodic rebalance to the active controller. Elections are written
 * PARTITION_CHANGES_PER_WRITE at a time; a failed batch fails the call (the batches before it
 * stay written, as elections of their own).
 */
export async function electLeaders(
  controller: Controller,
  electionType: number,
  partitions: readonly { topic: string; partition: number }[] | null,
  asController = false,
): Promise<ElectionResult[] | ControllerResult> {
  const results: ElectionResult[] = [];
  /** Partitions decided by the batches written so far. */
  const decided = new Set<string>();
  const eligible = (id: number): boolean => controller.cluster.isEligible(id);
  for (;;) {
    let pass: ElectionResult[] = [];
    let passDecided: string[] = [];
    let more = false;
    const res = await controller.write(
      (img: MetadataImage) => {
        pass = [];
        passDecided = [];
        more = false;
        const recs: MetadataRecord[] = [];
        const wanted = partitions ?? [...img.topicsByName.values()].flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition })));
        for (const { topic, partition } of wanted) {
          const key = `${topic}\u0000${partition}`;
          if (decided.has(key)) continue;
          const t = img.topicsByName.get(topic);
          const p = t?.partitions[partition];
          if (!t || !p) {
            pass.push({ topic, partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'The topic or partition does not exist.' });
            passDecided.push(key);
            continue;
          }
          const out = electionType === 1 ? uncleanElection(p, eligible) : preferredElection(p, eligible);
          if (isFailure(out)) {
            // A request for every partition lists only those where an election ran (Kafka).
            if (partitions !== null) pass.push({ topic, partition, errorCode: out.errorCode, errorMessage: out.errorMessage });
            passDecided.push(key);
            continue;
          }
          if (recs.length === PARTITION_CHANGES_PER_WRITE) {
            more = true;
            break;
          }
          recs.push(changeRecord(t.topicId, p, out));
          pass.push({ topic, partition, errorCode: ErrorCode.NONE, errorMessage: null });
          passDecided.push(key);
        }
        return recs;
      },
      { asController },
    );
    if (res.errorCode !== 0) return res;
    results.push(...pass);
    for (const k of passDecided) decided.add(k);
    if (!more) return results;
  }
}

export interface AlterPartitionRequest {
  readonly topicId: string;
  readonly partition: number;
  /** The leader asking, with its view of the partition. */
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly newIsr: readonly number[];
}

export type AlterPartitionResult = { readonly errorCode: 0; readonly partition: PartitionImage } | { readonly errorCode: number; readonly errorMessage: string };

/**
 * AlterPartition (Kafka's ReplicationControlManager.alterPartition): the leader changes the ISR.
 * The caller must lead at the current leader epoch, know the current partition epoch, and ask
 * for an ISR of replicas that includes itself, where every added member is live.
 */
export async function alterPartition(controller: Controller, req: AlterPartitionRequest): Promise<AlterPartitionResult> {
  const res = await controller.write((img) => {
    const t = img.topicsById.get(req.topicId);
    const p = t?.partitions[req.partition];
    if (!t || !p) return FAIL(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'The topic or partition does not exist.');
    if (req.leaderEpoch > p.leaderEpoch) return FAIL(ErrorCode.NOT_LEADER_OR_FOLLOWER, `Leader epoch ${req.leaderEpoch} is newer than the controller's ${p.leaderEpoch}.`);
    if (req.leaderEpoch < p.leaderEpoch) return FAIL(ErrorCode.FENCED_LEADER_EPOCH, `Leader epoch ${req.leaderEpoch} is older than the current ${p.leaderEpoch}.`);
    if (req.leaderId !== p.leader) return FAIL(ErrorCode.NOT_LEADER_OR_FOLLOWER, `Broker ${req.leaderId} is not the leader (${p.leader}).`);
    if (req.partitionEpoch !== p.partitionEpoch) return FAIL(ErrorCode.INVALID_UPDATE_VERSION, `Partition epoch ${req.partitionEpoch} does not match the current ${p.partitionEpoch}.`);
    if (!req.newIsr.includes(p.leader)) return FAIL(ErrorCode.INVALID_REQUEST, 'The new ISR must include the leader.');
    const outside = req.newIsr.find((r) => !p.replicas.includes(r));
    if (outside !== undefined) return FAIL(ErrorCode.INVALID_REQUEST, `Replica ${outside} is not a replica of the partition.`);
    const ineligible = req.newIsr.find((r) => !p.isr.includes(r) && !controller.cluster.isEligible(r));
    if (ineligible !== undefined) return FAIL(ErrorCode.INELIGIBLE_REPLICA, `Replica ${ineligible} is not a live, unfenced broker.`);
    // A reassignment completes once every target replica is in the ISR.
    if (inProgress(p)) {
      const target = reassignmentTarget(p);
      if (target.every((r) => req.newIsr.includes(r))) return [completion(t.topicId, p, target, req.newIsr)];
    }
    return [changeRecord(t.topicId, p, { isr: [...req.newIsr] })];
  });
  if (res.errorCode !== 0) return { errorCode: res.errorCode, errorMessage: res.errorMessage ?? '' };
  const p = controller.image.topicsById.get(req.topicId)?.partitions[req.partition];
  if (!p) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'The topic was deleted.' };
  return { errorCode: 0, partition: { ...p, replicas: [...p.replicas], isr: [...p.isr] } };
}
