/**
 * The rows run against one started broker: produce (ProducerPerformance), consume
 * (ConsumerPerformance of what the produce rows wrote), latency at fixed rates (the producer's
 * p50/p99/p99.9 and end-to-end through a kcat consumer, optionally beside a bulk writer), and
 * idle memory at many partitions. Each returns the figure of this broker; main.ts pairs them.
 */
import { join } from 'node:path';
import { type Broker } from './brokers.js';
import { backgroundProducer, consumerPerformance, createTopic, endOffsets, endToEndConsumer, kcatConsume, producerPerformance, writeCompressiblePayloads } from './perf-tools.js';
import { cpuSeconds, rssMiB, rssPeakSampler } from './proc.js';
import { percentile, recordSizeLabel, type Results, type Side } from './report.js';

export interface Sizes {
  /** MB written per produce row. */
  readonly produceMb: number;
  readonly partitions: readonly number[];
  readonly recordSizes: readonly number[];
  readonly acks: readonly ('1' | 'all')[];
  readonly compressions: readonly ('none' | 'lz4')[];
  readonly latencyRates: readonly number[];
  readonly latencySeconds: number;
  /** Also run the 20k rec/s latency row beside a bulk writer. */
  readonly bulkWriter: boolean;
  readonly idlePartitions: readonly number[];
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

export function side(b: Broker): Side {
  return b.kind === 'fjord' ? 'fjord' : 'peer';
}

function produceRowName(size: number, acks: string, compression: string, partitions: number): string {
  return `produce ${recordSizeLabel(size)} acks=${acks} ${compression} ${partitions}p`;
}

/**
 * Before a broker's measured rows: `mb` of 1 KiB records written with acks=1 and with acks=all
 * (half each) to a topic of 8 partitions, then read back once, none of it measured. A JVM
 * broker compiles its hot paths only after some traffic, so without this the first rows ran on
 * a cold Kafka and the later ones on a warm one, and row order alone moved Kafka's figures (its
 * acks=all rows, run after the acks=1 ones, came out faster than those). Fjord gets the same.
 */
export async function warmUpBroker(b: Broker, mb: number): Promise<void> {
  const topic = 'warm-up';
  await createTopic(b.bootstrap, topic, 8);
  const records = Math.round((mb * 1e6) / 2 / 1024);
  for (const acks of ['1', 'all'] as const) await producerPerformance(b.bootstrap, { topic, records, recordSize: 1024, acks, compression: 'none', throughput: -1 });
  await consumerPerformance(b.bootstrap, topic, 2 * records);
}

/**
 * Produce rows, then consume rows over the uncompressed acks=1 topics at the largest partition
 * count ≤ 8. Beside them, per record size, the broker's peak RSS over all of that size's produce
 * rows (sampled every 200 ms): its memory under produce load.
 */
export async function produceAndConsume(b: Broker, sizes: Sizes, durability: string, results: Results, payloadDir: string): Promise<void> {
  const consumeFrom = new Map<number, { topic: string; records: number }>();
  const consumePartitions = sizes.partitions.includes(8) ? 8 : (sizes.partitions[0] ?? 1);
  for (const size of sizes.recordSizes) {
    const rows = sizes.acks.flatMap((acks) => sizes.compressions.flatMap((compression) => sizes.partitions.map((partitions) => ({ acks, compression, partitions }))));
    const rss = rssPeakSampler(b.pid);
    let peakRss: number;
    try {
      for (const { acks, compression, partitions } of rows) {
        const topic = `p-${size}-${acks}-${compression}-${partitions}`;
        await createTopic(b.bootstrap, topic, partitions);
        const records = Math.round((sizes.produceMb * 1e6) / size);
        const payloadFile = compression === 'lz4' ? join(payloadDir, `payload-${size}.txt`) : undefined;
        if (payloadFile !== undefined) writeCompressiblePayloads(payloadFile, size);
        const cpu0 = cpuSeconds(b.pid);
        const r = await producerPerformance(b.bootstrap, { topic, records, recordSize: size, acks, compression, throughput: -1, ...(payloadFile === undefined ? {} : { payloadFile }) });
        const cpu = cpuSeconds(b.pid) - cpu0;
        const mb = (records * size) / 1e6;
        results.add({ name: produceRowName(size, acks, compression, partitions), unit: 'rec/s', peer: 'kafka', higherIsBetter: true, durability }, side(b), r.recordsPerSec, cpu / mb);
        if (acks === '1' && compression === 'none' && partitions === consumePartitions) consumeFrom.set(size, { topic, records });
      }
    } finally {
      peakRss = rss.stop();
    }
    results.add({ name: `peak RSS under produce, ${recordSizeLabel(size)} (every produce row of that size)`, unit: 'MiB', peer: 'kafka', higherIsBetter: false, durability }, side(b), peakRss);
  }
  for (const [size, { topic, records }] of consumeFrom) {
    const cpu0 = cpuSeconds(b.pid);
    const r = await consumerPerformance(b.bootstrap, topic, records);
    const cpu = cpuSeconds(b.pid) - cpu0;
    const name = `consume ${recordSizeLabel(size)} ${consumePartitions}p (fetch.MB.sec)`;
    results.add({ name, unit: 'MB/s', peer: 'kafka', higherIsBetter: true, durability }, side(b), r.fetchMbPerSec, cpu / r.mb);
  }
}

/**
 * The consume rows alone (`--sections consume`): `consumeMb` of uncompressed records of each size
 * written to 8 partitions with acks=1 (not a row), then read back by ConsumerPerformance and by
 * kcat, each timed and with the broker's CPU-seconds per MB over the read.
 */
export async function consumeOnly(b: Broker, sizes: Sizes, consumeMb: number, durability: string, results: Results): Promise<void> {
  const partitions = 8;
  for (const size of sizes.recordSizes) {
    const topic = `c-${size}-${partitions}`;
    await createTopic(b.bootstrap, topic, partitions);
    const records = Math.round((consumeMb * 1e6) / size);
    await producerPerformance(b.bootstrap, { topic, records, recordSize: size, acks: '1', compression: 'none', throughput: -1 });
    const label = recordSizeLabel(size);
    let cpu0 = cpuSeconds(b.pid);
    const r = await consumerPerformance(b.bootstrap, topic, records);
    let cpu = cpuSeconds(b.pid) - cpu0;
    results.add({ name: `consume ${label} ${partitions}p, ${consumeMb} MB (fetch.MB.sec)`, unit: 'MB/s', peer: 'kafka', higherIsBetter: true, durability }, side(b), r.fetchMbPerSec, cpu / r.mb);
    cpu0 = cpuSeconds(b.pid);
    const k = await kcatConsume(b.bootstrap, topic);
    cpu = cpuSeconds(b.pid) - cpu0;
    if (k.records < records) throw new Error(`kcat read ${k.records} of ${records} records`);
    const mb = (k.records * size) / 1e6;
    results.add({ name: `consume ${label} ${partitions}p, ${consumeMb} MB (kcat, whole run)`, unit: 'MB/s', peer: 'kafka', higherIsBetter: true, durability }, side(b), mb / k.seconds, cpu / mb);
  }
}

/** Fixed-rate acks=all 100 B produce to 8 partitions with an end-to-end consumer. */
export async function latency(b: Broker, sizes: Sizes, durability: string, results: Results): Promise<void> {
  const runs: { rate: number; bulk: boolean }[] = sizes.latencyRates.map((rate) => ({ rate, bulk: false }));
  if (sizes.bulkWriter) runs.push({ rate: 20_000, bulk: true });
  for (const { rate, bulk } of runs) {
    const topic = `lat-${rate}-${bulk ? 'bulk' : 'alone'}`;
    await createTopic(b.bootstrap, topic, 8);
    let bulkWriter: { stop(): Promise<void> } | null = null;
    if (bulk) {
      // The background writer: 1 KiB records at up to 50 MB/s to another topic, acks=1, from 3 s
      // before the measured run to its end (stopped then, whether or not the broker kept up).
      await createTopic(b.bootstrap, 'bulk', 8);
      bulkWriter = backgroundProducer(b.bootstrap, { topic: 'bulk', recordSize: 1024, acks: '1', compression: 'none', throughput: 50_000 });
      await new Promise((r) => setTimeout(r, 3000));
    }
    const bulkStart = bulk ? sum(await endOffsets(b.bootstrap, 'bulk')) : 0;
    const measureStart = performance.now();
    const e2e = endToEndConsumer(b.bootstrap, topic);
    await e2e.ready;
    const r = await producerPerformance(b.bootstrap, { topic, records: rate * sizes.latencySeconds, recordSize: 100, acks: 'all', compression: 'none', throughput: rate });
    await new Promise((res) => setTimeout(res, 1000));
    const lat = await e2e.stop();
    const bulkMb = bulk ? ((sum(await endOffsets(b.bootstrap, 'bulk')) - bulkStart) * 1024) / 1e6 : 0;
    const measuredSeconds = (performance.now() - measureStart) / 1000;
    await bulkWriter?.stop();
    const label = `${rate / 1000}k rec/s acks=all 100 B${bulk ? ' + bulk writer 50 MB/s' : ''}`;
    const spec = (what: string): { name: string; unit: string; peer: string; higherIsBetter: boolean; durability: string } => ({ name: `latency ${label}: ${what}`, unit: 'ms', peer: 'kafka', higherIsBetter: false, durability });
    results.add(spec('produce p50'), side(b), r.p50Ms);
    results.add(spec('produce p99'), side(b), r.p99Ms);
    results.add(spec('produce p99.9'), side(b), r.p999Ms);
    results.add(spec('end-to-end p50'), side(b), percentile(lat, 50));
    results.add(spec('end-to-end p99'), side(b), percentile(lat, 99));
    results.add(spec('end-to-end p99.9'), side(b), percentile(lat, 99.9));
    if (bulk) results.add({ name: `latency ${label}: bulk writer achieved`, unit: 'MB/s', peer: 'kafka', higherIsBetter: true, durability }, side(b), bulkMb / measuredSeconds);
  }
}

/** RSS of a broker holding `n` idle partitions (topics of 100 partitions), after creating them. */
export async function idleRss(b: Broker, n: number, durability: string, results: Results): Promise<void> {
  for (let i = 0; i * 100 < n; i++) await createTopic(b.bootstrap, `idle-${i}`, Math.min(100, n - i * 100));
  // Settle: let start-up garbage be collected and background tasks run once.
  await new Promise((r) => setTimeout(r, 5000));
  results.add({ name: `RSS idle, ${n.toLocaleString('en')} partitions`, unit: 'MiB', peer: 'kafka', higherIsBetter: false, durability }, side(b), rssMiB(b.pid));
}
