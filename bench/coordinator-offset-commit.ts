// Offset-commit rate of the group coordinator over TCP: many connections, each sending OffsetCommit
// (v8, one partition) back to back to groups that all live on one __consumer_offsets partition,
// the coordinator's worst case (one shard, one write queue). Every commit is acknowledged after
// fsync. Run twice in the same process: once with one append and fsync per write (the runtime
// capped at 1 byte per append, as before coalescing), once coalescing the writes queued behind an
// append into one append; prints both rates and the ratio coalesced / per-write.
// Run: node bench/run.mjs bench/coordinator-offset-commit.ts [--connections=32] [--commits=20]
import { realTimers, systemClock } from '../src/common/time.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createLogger } from '../src/common/logger.js';
import { createGroupApiHandlers } from '../src/coordinator/group-api-handlers.js';
import { type CoordinatorHost, type CoordinatorLog } from '../src/coordinator/coordinator-host.js';
import { coordinatorLogOf } from '../src/coordinator/partition-log-adapter.js';
import { encodeOffsetCommitRequest } from '../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../src/protocol/generated/messages/offset-commit-response.js';
import { Reader } from '../src/protocol/reader.js';
import { Writer } from '../src/protocol/writer.js';
import { ApiRegistry } from '../src/server/api-registry.js';
import { BrokerServer } from '../src/server/server.js';
import { logConfig } from '../src/storage/log-config.js';
import { PartitionLog } from '../src/storage/partition-log.js';

const arg = (name: string, dflt: number): number => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? dflt : Number(a.slice(name.length + 3));
};
const CONNECTIONS = arg('connections', 32);
const COMMITS = arg('commits', 20);
const TOPIC_ID = '00000000-0000-0000-0000-0000000000b1';

/** A node's coordinator seam over real partition logs in `root` (fsync on every acks=all append). */
function benchHost(root: string, logs: PartitionLog[]): CoordinatorHost {
  const topics = new Map<string, number>([['orders', 8]]);
  return {
    nodeId: 1,
    host: '127.0.0.1',
    port: 0,
    clock: systemClock,
    timers: realTimers,
    config: (k) => ({ 'offsets.topic.num.partitions': '1', 'group.initial.rebalance.delay.ms': '0' })[k],
    async openInternalPartition(topic, partition, partitions): Promise<CoordinatorLog> {
      topics.set(topic, partitions);
      const log = await PartitionLog.open({ dir: join(root, `${topic}-${partition}`), topicId: TOPIC_ID, config: logConfig({ cleanupPolicy: ['compact'] }) });
      logs.push(log);
      return coordinatorLogOf(log);
    },
    topicIdByName: (name) => (topics.has(name) ? TOPIC_ID : undefined),
    topicNameById: () => 'orders',
    partitionCount: (t) => topics.get(t),
    topicNames: () => [...topics.keys()],
    onMetadataChange: () => () => undefined,
  };
}

/** One raw connection sending OffsetCommit requests one after another. */
async function committer(port: number, id: number, commits: number): Promise<void> {
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
  let buf: Buffer = Buffer.alloc(0);
  let waiter: ((body: Buffer) => void) | null = null;
  socket.on('data', (d: Buffer) => {
    buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
      const frame = buf.subarray(4, 4 + buf.readInt32BE(0));
      buf = buf.subarray(4 + frame.length);
      waiter?.(frame.subarray(4));
    }
  });
  for (let i = 0; i < commits; i++) {
    const w = new Writer(128);
    w.int16(8).int16(8).int32(i).nullableString(`bench-${id}`).uvarint(0);
    encodeOffsetCommitRequest(
      w,
      { groupId: `group-${id}`, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'orders', partitions: [{ partitionIndex: id % 8, committedOffset: BigInt(i), committedLeaderEpoch: 0, committedMetadata: '' }] }] },
      8,
    );
    const payload = w.toBuffer();
    const frame = Buffer.allocUnsafe(4 + payload.length);
    frame.writeInt32BE(payload.length, 0);
    payload.copy(frame, 4);
    const body = await new Promise<Buffer>((resolve) => {
      waiter = resolve;
      socket.write(frame);
    });
    const r = new Reader(body);
    r.taggedFields();
    const res = decodeOffsetCommitResponse(r, 8);
    const code = res.topics[0]?.partitions[0]?.errorCode;
    if (code !== 0) throw new Error(`commit failed with error ${code}`);
  }
  socket.destroy();
}

async function run(maxBatchBytes: number | undefined): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), 'fjord-bench-coord-'));
  const logs: PartitionLog[] = [];
  const groups = await createGroupApiHandlers(benchHost(root, logs), maxBatchBytes === undefined ? {} : { maxBatchBytes });
  const registry = new ApiRegistry();
  registry.registerAll(groups.handlers);
  const server = new BrokerServer({
    host: '127.0.0.1',
    port: 0,
    handlers: registry.handlers,
    headers: registry.headers,
    maxFrameBytes: 1 << 20,
    idleTimeoutMs: 60_000,
    maxInFlight: 16,
    log: createLogger({}, 'error', () => undefined),
    unsupportedApiVersionsBody: () => registry.unsupportedApiVersionsBody(),
  });
  const port = await server.listen();
  await committer(port, 0, 1); // creates __consumer_offsets-0 before timing
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, id) => committer(port, id, COMMITS)));
  const ms = performance.now() - t0;
  await server.close(100);
  await groups.close();
  for (const log of logs) await log.close();
  rmSync(root, { recursive: true, force: true });
  return (CONNECTIONS * COMMITS * 1000) / ms;
}

const perWrite: number[] = [];
const coalesced: number[] = [];
// Interleaved rounds, so a noisy neighbour on the shared disk hits both modes alike.
for (let round = 0; round < 3; round++) {
  perWrite.push(await run(1));
  coalesced.push(await run(undefined));
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const before = median(perWrite);
const after = median(coalesced);
console.log(`offset commits, ${CONNECTIONS} connections x ${COMMITS} commits, one __consumer_offsets partition, fsync per append`);
console.log(`  one append per write : ${before.toFixed(0)} commits/s`);
console.log(`  coalesced appends    : ${after.toFixed(0)} commits/s`);
console.log(`  ratio coalesced / per-write: ${(after / before).toFixed(2)}`);
