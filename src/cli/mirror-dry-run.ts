/**
 * `fjord cluster-mirrors --stop … --dry-run`: what a stop (failover) would do to each partition,
 * changing nothing. A stop truncates nothing: it ends fetching where the destination log ends,
 * aborts every transaction still open in the partition (an ABORT marker each, so read_committed
 * consumers are not blocked forever), appends a MIRROR_PID_RESET marker and makes the partition
 * writable (the STOPPING sequence, KIP-1279 §8.5). The records the source holds beyond that end
 * stay there. The open transactions come from DescribeProducers on the destination.
 */
import type { MirrorAdmin } from '../admin/mirror-admin.js';
import { Exit } from './cli-common.js';
import type { CliIo } from './mirror-progress.js';

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
