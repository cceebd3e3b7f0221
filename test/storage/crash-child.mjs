// Child process of crash.test.ts: opens (recovering) the log, then appends batches with acks=all
// semantics, printing one line per acknowledged batch, and acks=1 batches beside them, until the
// parent kills it with SIGKILL.
// Usage: node crash-child.mjs <compiled src dir> <log dir> <run>
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [distDir, logDir, runArg] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(distDir, p)).href);
const { PartitionLog } = await load('storage/partition-log.js');
const { logConfig } = await load('storage/log-config.js');
const { buildRecordBatch } = await load('protocol/records.js');

const run = Number(runArg);
const log = await PartitionLog.open({
  dir: logDir,
  topicId: 'CRASHCRASHCRASHCRASHCR',
  config: logConfig({ segmentBytes: 16 * 1024, indexIntervalBytes: 512 }),
  // Small, so background fsyncs (and appends waiting for them) interleave with the acks=all ones.
  flushAheadBytes: 8 * 1024,
});
process.stdout.write(`START ${log.logEndOffset} ${log.latestEpoch}\n`);

let i = 0;
const inflight = new Set();
const one = async () => {
  const n = 1 + (i % 5);
  const value = Buffer.alloc(20 + ((i * 37) % 300), `${run}:${i}:`);
  i++;
  const batch = buildRecordBatch({
    now: Date.now(),
    records: Array.from({ length: n }, (_, k) => ({ key: Buffer.from(`k${k}`), value })),
  });
  const r = await log.appendAsLeader(batch, run, { requiredAcks: -1 });
  if (r.errorCode !== 0) throw new Error(`append failed ${r.errorCode}`);
  process.stdout.write(`ACK ${r.baseOffset} ${r.lastOffset} ${batch.toString('hex')}\n`);
};
// Beside them, an acks=1 writer of larger batches (a bounded amount per run, so the log the
// next run recovers stays small), not acknowledged to the parent.
const bulk = async () => {
  for (let j = 0; j < 64; j++) {
    const value = Buffer.alloc(900, `${run}:bulk:${j}:`);
    const batch = buildRecordBatch({ now: Date.now(), records: Array.from({ length: 4 }, () => ({ key: null, value })) });
    const r = await log.appendAsLeader(batch, run, { requiredAcks: 1 });
    if (r.errorCode !== 0) throw new Error(`acks=1 append failed ${r.errorCode}`);
  }
};
void bulk();
for (;;) {
  while (inflight.size < 4) {
    const p = one().finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.race(inflight);
}
