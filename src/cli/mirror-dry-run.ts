/**
 * The dry runs of `fjord cluster-mirrors`: `--stop` and `--start` with `--dry-run`.
 *
 * `fjord cluster-mirrors --stop … --dry-run`: what a stop (failover) would do to each partition,
 * changing nothing. A stop truncates nothing: it ends fetching where the destination log ends,
 * aborts every transaction still open in the partition (an ABORT marker each, so read_committed
 * consumers are not blocked forever), appends a MIRROR_PID_RESET marker and makes the partition
 * writable (the STOPPING sequence, KIP-1279 §8.5). The records the source holds beyond that end
 * stay there. The open transactions come from DescribeProducers on the destination.
 */
import type { MirrorAdmin, OpenTransaction } from '../admin/mirror-admin.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { hasMirrorLoop, lookupLastMirrorEpoch } from '../mirror/source-lookups.js';
import { Exit } from './cli-common.js';
import { planTruncation } from './mirror-dry-run-truncation.js';
import type { CliIo } from './mirror-progress.js';
import { isFailure, locatePartitions, offsetRange, readBatches, type PartitionLocation } from './mirror-verify-reader.js';

export async function stopDryRun(admin: MirrorAdmin, mirror: string, topics: readonly string[], io: CliIo): Promise<number> {
  const wanted = new Set(topics);
  const described = (await admin.describeClusterMirrors([mirror])).flatMap((m) => m.partitions).filter((p) => wanted.has(p.topic));
  const open = await admin.openTransactions([...new Set(described.map((p) => p.topic))]);
  for (const p of described) {
    const where = `${p.topic}-${p.partition}`;
    if (p.state === 'STOPPED') {
      io.out(`${where}: already STOPPED; nothing to do.`);
      continue;
    }
    const end = p.destinationOffset >= 0 ? `at offset ${p.destinationOffset}` : 'where the local log ends';
    const left = p.lag > 0 ? `; ${p.lag} records on the source are not mirrored yet and would stay behind` : p.lag === 0 ? '; nothing is left behind on the source' : '';
    io.out(`${where}: ${p.state} -> STOPPED: fetching would end ${end}${left}; nothing would be truncated.`);
    const txns = open.get(where) ?? [];
    if (txns.length === 0) io.out(`${where}:   no open transaction to abort.`);
    for (const t of txns) io.out(`${where}:   would abort the open transaction of producer ${t.producerId} (epoch ${t.producerEpoch}), open since offset ${t.firstOffset}.`);
    io.out(`${where}:   would append MIRROR_PID_RESET and accept writes.`);
  }
  io.out('Dry run: nothing was changed.');
  return Exit.OK;
}

/** The clusters a start dry run reads: this one (`destination`) and the mirror's source. */
interface StartDryRunClients {
  readonly admin: MirrorAdmin;
  readonly destination: KafkaClient;
  readonly source: KafkaClient;
}

const iso = (ms: number): string => (ms >= 0 ? new Date(ms).toISOString() : '-');

/**
 * `fjord cluster-mirrors --start … --dry-run`: what starting the topics would do to each
 * partition, changing nothing. A topic new here is created and copied from the source's log
 * start; a topic that holds data here (STOPPED after a failover, or this cluster's own topic
 * being failed back) goes through LOG_TRUNCATION and the fetcher's epoch comparison
 * (./mirror-dry-run-truncation.ts), which cut everything this cluster holds beyond the history
 * it shares with the source: that range is printed with its record count and time range, with
 * the open transactions whose records it holds (they are dropped with it, not aborted by a
 * marker).
 */
export async function startDryRun(c: StartDryRunClients, mirror: string, topics: readonly string[], io: CliIo): Promise<number> {
  const described = (await c.admin.describeClusterMirrors([mirror])).flatMap((m) => m.partitions);
  const [here, there, cluster] = await Promise.all([locatePartitions(c.destination, topics), locatePartitions(c.source, topics), c.destination.describeCluster()]);
  const open = await c.admin.openTransactions(topics.filter((t) => [...here.values()].some((l) => l.topic === t)));
  for (const topic of topics) {
    const local = [...here.values()].filter((l) => l.topic === topic).sort((x, y) => x.partition - y.partition);
    const remote = [...there.values()].filter((l) => l.topic === topic);
    if (remote.length === 0) {
      io.out(`${topic}: not found on the source; the start would fail with UNKNOWN_TOPIC_OR_PARTITION.`);
      continue;
    }
    const topicId = (remote[0] as PartitionLocation).topicId;
    if (await hasMirrorLoop(c.source, cluster.clusterId, topic)) {
      io.out(`${topic}: the source mirrors it from this cluster; the start would be refused with TOPIC_ALREADY_IN_CLUSTER_MIRROR (mirror loop).`);
      continue;
    }
    if (local.length === 0) {
      io.out(`${topic}: would be created here with ${remote.length} partitions (topic id ${topicId}) and copied from the source's log start; nothing here to truncate.`);
      continue;
    }
    if ((local[0] as PartitionLocation).topicId !== topicId) {
      io.out(`${topic}: exists here with topic id ${(local[0] as PartitionLocation).topicId}, the source's is ${topicId}; the start would fail with INCONSISTENT_TOPIC_ID.`);
      continue;
    }
    for (const at of local) {
      const where = `${topic}-${at.partition}`;
      const state = described.find((p) => p.topic === topic && p.partition === at.partition)?.state ?? null;
      const src = there.get(where);
      if (state !== null && state !== 'STOPPED') {
        io.out(`${where}: already ${state}; the start changes nothing.`);
        continue;
      }
      if (src === undefined) {
        io.out(`${where}: not on the source (it has ${remote.length} partitions); not mirrored.`);
        continue;
      }
      await partitionDryRun(c, where, state ?? 'not mirrored here', at, src, cluster.clusterId, open.get(where) ?? [], io);
    }
  }
  io.out('Dry run: nothing was changed.');
  return Exit.OK;
}

async function partitionDryRun(c: StartDryRunClients, where: string, state: string, at: PartitionLocation, src: PartitionLocation, ourClusterId: string, txns: readonly OpenTransaction[], io: CliIo): Promise<void> {
  const [mine, theirs] = await Promise.all([offsetRange(c.destination, at), offsetRange(c.source, src)]);
  const lme = await lookupLastMirrorEpoch(c.source, ourClusterId, at.topicId, at.partition);
  const plan = await planTruncation({ client: c.destination, at }, { client: c.source, at: src }, lme, mine.logStart, mine.highWatermark);
  io.out(
    `${where}: ${state} -> LOG_TRUNCATION -> MIRRORING; ${lme >= 0 ? `the source holds last mirrored epoch ${lme} for this cluster` : 'the source holds no last mirrored epoch for this cluster, so LOG_TRUNCATION cuts to offset 0'}.`,
  );
  const { target } = plan;
  if (target < mine.highWatermark) {
    let records = 0;
    let markers = 0;
    let batches = 0;
    let first = -1;
    let last = -1;
    for await (const b of readBatches(c.destination, at, target, mine.highWatermark)) {
      if (isFailure(b)) break;
      batches++;
      if (b.isControl) {
        markers++;
        continue;
      }
      records += b.recordsCount;
      if (b.firstTimestamp >= 0 && (first < 0 || b.firstTimestamp < first)) first = b.firstTimestamp;
      if (b.maxTimestamp > last) last = b.maxTimestamp;
    }
    const how = plan.afterLastMirrorEpoch > target ? ` (to ${plan.afterLastMirrorEpoch} by the last mirrored epoch, then to ${target} where the epochs part from the source's)` : '';
    io.out(`${where}:   would truncate offsets ${target}..${mine.highWatermark - 1}${how}: ${records} records and ${markers} control markers in ${batches} batches, timestamps ${iso(first)} to ${iso(last)}.`);
  } else {
    io.out(`${where}:   nothing would be truncated: the log here ends at offset ${mine.highWatermark}, within the history it shares with the source.`);
  }
  const cut = txns.filter((t) => t.firstOffset >= target);
  const kept = txns.filter((t) => t.firstOffset < target);
  if (txns.length === 0) io.out(`${where}:   no open transaction.`);
  for (const t of cut) io.out(`${where}:   would drop the open transaction of producer ${t.producerId} (epoch ${t.producerEpoch}), open since offset ${t.firstOffset}, with the truncated records.`);
  for (const t of kept) io.out(`${where}:   the open transaction of producer ${t.producerId} (epoch ${t.producerEpoch}), open since offset ${t.firstOffset}, lies below the cut and stays open.`);
  const copy = theirs.highWatermark > target ? `offsets ${target}..${theirs.highWatermark - 1} now` : 'nothing yet';
  io.out(`${where}:   would then copy from the source from offset ${target} (${copy}).`);
}
