/**
 * Metadata writes of many topics gathered into few controller writes. An operator request naming
 * hundreds of topics would otherwise be hundreds of metadata batches, each a compare-and-swap on
 * etcd that every node applies and reconciles one after another, while the partitions of the
 * topics already changed write their own records (epoch bumps) into the same log: the request
 * slowed as it went and ran for minutes past the client's time-out.
 *
 * A cluster's metadata batch is one etcd transaction with one put per record, and etcd refuses a
 * transaction of more than 128 operations (its default `--max-txn-ops`), so a gathered write
 * carries at most METADATA_RECORDS_PER_WRITE records. When the controller refuses a gathered
 * write, each of its groups is written alone, so one topic's refusal costs no other topic its
 * change and every topic is answered with its own outcome.
 */
import type { MirrorControllerOp } from './mirror-host.js';

/** Records per metadata batch: below etcd's 128 operations per transaction (one put per record, plus the log head). */
const METADATA_RECORDS_PER_WRITE = 100;

/** How many metadata records an op writes at most. */
function recordsOf(op: MirrorControllerOp): number {
  switch (op.type) {
    case 'createTopic':
      return 1 + op.numPartitions + op.configs.size;
    case 'mirrorTopicLists':
      return 2;
    case 'mirrorEmptiedOf':
      return 0;
    default:
      return 1;
  }
}

interface WriteOutcome {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/**
 * Writes `groups` (each the ops of one topic, written together or not at all) in as few writes as
 * fit; resolves with each group's outcome, in order.
 */
export async function writeGathered(groups: readonly (readonly MirrorControllerOp[])[], write: (ops: MirrorControllerOp[]) => Promise<WriteOutcome>): Promise<WriteOutcome[]> {
  const out: WriteOutcome[] = new Array<WriteOutcome>(groups.length);
  let chunk: number[] = [];
  let records = 0;
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    const members = chunk;
    chunk = [];
    records = 0;
    const r = await write(members.flatMap((i) => [...(groups[i] ?? [])]));
    if (r.errorCode === 0 || members.length === 1) {
      for (const i of members) out[i] = r;
      return;
    }
    for (const i of members) out[i] = await write([...(groups[i] ?? [])]);
  };
  for (let i = 0; i < groups.length; i++) {
    const n = (groups[i] ?? []).reduce((sum, op) => sum + recordsOf(op), 0);
    if (chunk.length > 0 && records + n > METADATA_RECORDS_PER_WRITE) await flush();
    chunk.push(i);
    records += n;
  }
  await flush();
  return out;
}

/** `fn` over `items`, at most `limit` at a time; results in the items' order. */
export async function mapConcurrently<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
