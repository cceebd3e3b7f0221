/**
 * Time lag for describe: how far, in the records' own time, the mirror trails its source. Per
 * partition it is the source's newest max timestamp minus the newest mirrored batch's max
 * timestamp. A caught-up partition's newest batch is the source's newest; for a lagging one the
 * source is asked with ListOffsets MAX_TIMESTAMP (-3, KIP-734, v7), once per source leader,
 * bounded so a slow or unreachable source never holds up describe.
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { PartitionDescription } from './mirror-manager.js';

/** ListOffsetsRequest.MAX_TIMESTAMP. */
const MAX_TIMESTAMP = -3n;
const READ_UNCOMMITTED = 0;
const LOOKUP_TIMEOUT_MS = 2000;

/** Fills `sourceMaxTimestamp` of lagging partitions in place; best effort. */
export async function fillSourceTimestamps(client: KafkaClient | undefined, parts: PartitionDescription[]): Promise<void> {
  if (client === undefined) return;
  const byLeader = new Map<number, Map<string, PartitionDescription[]>>();
  for (const p of parts) {
    if (p.lag <= 0 || p.sourceLeaderId < 0) continue;
    let topics = byLeader.get(p.sourceLeaderId);
    if (topics === undefined) byLeader.set(p.sourceLeaderId, (topics = new Map()));
    let list = topics.get(p.topic);
    if (list === undefined) topics.set(p.topic, (list = []));
    list.push(p);
  }
  const lookups = [...byLeader].map(async ([leader, topics]) => {
    const res = await client.send(
      Apis.ListOffsets,
      {
        replicaId: -1,
        isolationLevel: READ_UNCOMMITTED,
        topics: [...topics].map(([name, ps]) => ({ name, partitions: ps.map((p) => ({ partitionIndex: p.partition, currentLeaderEpoch: -1, timestamp: MAX_TIMESTAMP })) })),
      },
      leader,
    );
    for (const t of res.topics) {
      for (const r of t.partitions) {
        if (r.errorCode !== ErrorCode.NONE || r.timestamp < 0n) continue;
        const p = topics.get(t.name)?.find((x) => x.partition === r.partitionIndex);
        if (p !== undefined) p.sourceMaxTimestamp = Number(r.timestamp);
      }
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, LOOKUP_TIMEOUT_MS)));
  await Promise.race([Promise.allSettled(lookups), deadline]);
  clearTimeout(timer);
}
