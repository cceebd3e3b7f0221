/**
 * Where a catch-up into Fjord spends its time, partition by partition: a source (Apache Kafka,
 * or Fjord with `--source fjord`) preloaded with `--mb` MiB of 1 KiB records in `--partitions` partitions, a fresh Fjord
 * destination, `fjord cluster-mirrors --start`, and one kafkajs admin polling every partition's
 * end offset on the destination every `--poll-ms`.
 *
 * Prints, in ms from the command: when each partition's first record arrived and when it held
 * everything (min / p50 / p90 / max over the partitions), so a copy limited by partitions
 * starting one after another shows as a wide first-byte spread, one limited by throughput as a
 * narrow one; the copy's MB/s from the first byte to the last (only the bytes that arrived after
 * the first look that saw any: what it saw came before the window); and the CPU the source broker,
 * the destination and this script's poller used over that window, in % of one core (on two
 * cores the three together cannot pass 200 %). `--verify` then compares every partition's
 * segment bytes on both sides (a mirror keeps the source's bytes).
 *
 *   node bench/run.mjs bench/mirror-timeline.ts [--source kafka|fjord] [--partitions 200] [--mb 64] [--fetchers 1] [--poll-ms 5] [--verify]
 *     [--mirror-config key=value]...   (a mirror setting, e.g. mirror.fetch.pipeline.max.bytes=0)
 *     [--warm-memory-gib N|auto]        (touch free memory first, see ./compare/warm-memory.ts; default 0)
 *     [--read-source]                   (kcat reads the whole topic from the source first, and its rate is
 *                                        logged: what a native consumer gets from that source)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { type Broker, startBroker } from './compare/brokers.js';
import { bytesOf, segmentFiles, windowRate, withFjordMirror } from './compare/mirror.js';
import { createTopic, endOffsets, kcatConsume, producerPerformance } from './compare/perf-tools.js';
import { cpuSeconds } from './compare/proc.js';
import { warmMemory, warmTarget } from './compare/warm-memory.js';

const { values: flags } = parseArgs({
  options: {
    source: { type: 'string', default: 'kafka' },
    partitions: { type: 'string', default: '200' },
    mb: { type: 'string', default: '64' },
    fetchers: { type: 'string', default: '1' },
    'poll-ms': { type: 'string', default: '5' },
    verify: { type: 'boolean', default: false },
    'mirror-config': { type: 'string', multiple: true, default: [] },
    'warm-memory-gib': { type: 'string', default: '0' },
    'read-source': { type: 'boolean', default: false },
  },
});
const SOURCE = flags.source === 'fjord' ? 'fjord' : 'kafka';
if (flags.source !== SOURCE) throw new Error(`--source takes kafka or fjord, not ${flags.source}`);
const PARTITIONS = Number(flags.partitions);
const RECORDS = Number(flags.mb) * 1024;
const POLL_MS = Number(flags['poll-ms']);
const TOPIC = 'timeline';
const mirrorConfig: Record<string, string> = {};
for (const kv of flags['mirror-config']) {
  const i = kv.indexOf('=');
  mirrorConfig[kv.slice(0, i)] = kv.slice(i + 1);
}
const log = (msg: string): void => console.error(`[mirror-timeline ${new Date().toISOString().slice(11, 19)}] ${msg}`);

function spread(xs: readonly number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return `${s[0]} / ${at(0.5)} / ${at(0.9)} / ${s.at(-1)}`;
}

/** Segment bytes of one partition, its .log files in order (for --verify). */
function partitionBytes(b: Broker, p: number): Buffer {
  const dir = join(b.logDir, `${TOPIC}-${p}`);
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(join(dir, f))));
}

interface Window {
  at: number;
  src: number;
  dst: number;
  self: number;
}

async function main(): Promise<void> {
  const warm = await warmMemory(warmTarget(flags['warm-memory-gib']));
  if (warm.gib > 0) log(`touched ${warm.gib} GiB of free memory in ${warm.seconds.toFixed(1)} s (${warm.gbPerSec.toFixed(2)} GB/s)`);
  const src = await startBroker(SOURCE, { durability: 'default' });
  try {
    const dst = await startBroker('fjord', { durability: 'default', overrides: { 'mirror.num.replica.fetchers': flags.fetchers } });
    try {
      log(`preloading ${flags.mb} MiB in ${PARTITIONS} partitions into ${SOURCE === 'kafka' ? 'Kafka' : 'Fjord'}`);
      await createTopic(src.bootstrap, TOPIC, PARTITIONS);
      await producerPerformance(src.bootstrap, { topic: TOPIC, records: RECORDS, recordSize: 1024, acks: '1', compression: 'none', throughput: -1 });
      const target = await endOffsets(src.bootstrap, TOPIC);
      const bytes = bytesOf(segmentFiles(src, TOPIC, PARTITIONS));
      if (flags['read-source']) {
        const cpu0 = cpuSeconds(src.pid);
        const r = await kcatConsume(src.bootstrap, TOPIC);
        log(`kcat read the source's ${r.records} records in ${(r.seconds * 1000).toFixed(0)} ms (${(bytes / 1e6 / r.seconds).toFixed(0)} MB/s, process start included), source CPU ${(cpuSeconds(src.pid) - cpu0).toFixed(2)} s`);
      }
      const admin = new Kafka({ clientId: 'mirror-timeline', brokers: [dst.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
      await admin.connect();
      const first = new Map<number, number>();
      const done = new Map<number, number>();
      const sample = (): Window => {
        const u = process.cpuUsage();
        return { at: Date.now(), src: cpuSeconds(src.pid), dst: cpuSeconds(dst.pid), self: (u.user + u.system) / 1e6 };
      };
      let from: Window | null = null;
      let to: Window | null = null;
      /** Records the first look that saw any already held: they arrived before the window began. */
      let seenAtFirst = 0;
      try {
        log(`mirroring with ${flags.fetchers} fetch loop(s)`);
        await withFjordMirror(src, dst, TOPIC, mirrorConfig, async (startedAt) => {
          while (done.size < PARTITIONS) {
            if (Date.now() - startedAt > 10 * 60_000) throw new Error('catch-up not done after 10 minutes');
            let offs: { partition: number; high: string }[] = [];
            try {
              offs = await admin.fetchTopicOffsets(TOPIC);
            } catch {
              // The topic does not exist on the destination yet.
            }
            const now = Date.now() - startedAt;
            for (const o of offs) {
              const high = Number(o.high);
              if (high > 0 && from === null) {
                from = sample();
                seenAtFirst = offs.reduce((n, x) => n + Number(x.high), 0);
              }
              if (high > 0 && !first.has(o.partition)) first.set(o.partition, now);
              if (high >= (target[o.partition] ?? 0) && !done.has(o.partition)) done.set(o.partition, now);
            }
            if (done.size === PARTITIONS) to = sample();
            else await new Promise((r) => setTimeout(r, POLL_MS));
          }
        });
      } finally {
        await admin.disconnect();
      }
      const a = from as Window | null;
      const b = to as Window | null;
      if (a === null || b === null) throw new Error('the copy was not observed');
      const seconds = (b.at - a.at) / 1000;
      const pct = (x: number): string => `${((x / Math.max(seconds, 0.001)) * 100).toFixed(0)} %`;
      console.log(`${SOURCE === 'kafka' ? 'Kafka' : 'Fjord'} → Fjord, ${PARTITIONS} partitions, ${(bytes / 2 ** 20).toFixed(0)} MiB of segment files, ${flags.fetchers} fetch loop(s), mirror config ${JSON.stringify(mirrorConfig)}`);
      console.log(`first record per partition, ms from --start (min / p50 / p90 / max): ${spread([...first.values()])}`);
      console.log(`partition complete, ms from --start (min / p50 / p90 / max):      ${spread([...done.values()])}`);
      const total = target.reduce((n, x) => n + x, 0);
      const inWindow = (bytes * (total - seenAtFirst)) / total;
      const rate = inWindow > 0 ? `${windowRate(inWindow, seconds).toFixed(0)} MB/s` : 'no rate (everything arrived before the first look)';
      console.log(`copy, first byte to last: ${(seconds * 1000).toFixed(0)} ms, ${rate} (${((seenAtFirst / total) * 100).toFixed(0)} % had arrived at the first look and is not counted)`);
      console.log(`CPU over the copy, % of one core: source ${pct(b.src - a.src)}, destination ${pct(b.dst - a.dst)}, this poller ${pct(b.self - a.self)}`);
      if (flags.verify) {
        let differ = 0;
        for (let p = 0; p < PARTITIONS; p++) if (!partitionBytes(src, p).equals(partitionBytes(dst, p))) differ++;
        console.log(`partitions whose segment bytes differ between source and destination: ${differ} of ${PARTITIONS}`);
        if (differ > 0) process.exitCode = 1;
      }
    } finally {
      await dst.stop();
    }
  } finally {
    await src.stop();
  }
}

await main();
