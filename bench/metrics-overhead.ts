// Produce throughput with metrics on vs off, in the same run: two node processes started the same
// way (`node bin/fjord.js start`, so `npm run build` first; `npm run bench` does), one with
// `metrics.listener` (and Prometheus-style scrapes once a second while producing), one without.
// Interleaved rounds of the same kafkajs workload against each; prints records/s and the ratio.
// Run: node bench/run.mjs bench/metrics-overhead.ts [--rounds=3] [--batches=200]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type Producer } from 'kafkajs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string, dflt: number): number => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const ROUNDS = arg('rounds', 3);
const BATCHES = arg('batches', 200);
const RECORDS = 100;
const VALUE = Buffer.alloc(200, 'v');

function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => res(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

interface Node {
  readonly port: number;
  readonly metricsPort: number | null;
  readonly child: ChildProcess;
  readonly dir: string;
}

async function start(withMetrics: boolean): Promise<Node> {
  const port = await freePort();
  const metricsPort = withMetrics ? await freePort() : null;
  const dir = mkdtempSync(join(tmpdir(), 'fjord-bench-metrics-'));
  const args = [join(ROOT, 'bin/fjord.js'), 'start', '--override', `listeners=PLAINTEXT://127.0.0.1:${port}`, '--override', `log.dirs=${dir}`];
  if (metricsPort !== null) args.push('--override', `metrics.listener=http://127.0.0.1:${metricsPort}`);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((res, rej) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('"msg":"node started"')) res();
    });
    child.once('exit', (code) => rej(new Error(`node exited with ${code}: ${err}`)));
  });
  return { port, metricsPort, child, dir };
}

async function producerFor(node: Node): Promise<Producer> {
  const kafka = new Kafka({ clientId: 'bench', brokers: [`127.0.0.1:${node.port}`], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'bench', numPartitions: 4 }], waitForLeaders: true });
  await admin.disconnect();
  const p = kafka.producer({ allowAutoTopicCreation: false });
  await p.connect();
  return p;
}

/** Records/s of BATCHES sends of RECORDS records, 8 in flight; scrapes once a second when it can. */
async function round(node: Node, producer: Producer): Promise<number> {
  let scraping = true;
  const scraper = (async () => {
    while (scraping && node.metricsPort !== null) {
      await (await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)).text();
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const messages = Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i}`, value: VALUE }));
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next++ < BATCHES) await producer.send({ topic: 'bench', acks: 1, messages });
    }),
  );
  const ms = performance.now() - t0;
  scraping = false;
  await scraper;
  return (BATCHES * RECORDS * 1000) / ms;
}

const on = await start(true);
const off = await start(false);
try {
  const [pOn, pOff] = [await producerFor(on), await producerFor(off)];
  await round(on, pOn);
  await round(off, pOff); // warm-up, not counted
  const rates = { on: [] as number[], off: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which goes first so a noisy neighbour hurts both alike.
    if (i % 2 === 0) {
      rates.on.push(await round(on, pOn));
      rates.off.push(await round(off, pOff));
    } else {
      rates.off.push(await round(off, pOff));
      rates.on.push(await round(on, pOn));
    }
  }
  await pOn.disconnect();
  await pOff.disconnect();
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const mOn = median(rates.on);
  const mOff = median(rates.off);
  console.log(`produce, ${RECORDS} x ${VALUE.length} B records per send, 8 sends in flight, acks=1, median of ${ROUNDS} rounds`);
  console.log(`  metrics off: ${Math.round(mOff)} records/s`);
  console.log(`  metrics on : ${Math.round(mOn)} records/s (scraped every second)`);
  console.log(`  ratio on/off: ${(mOn / mOff).toFixed(3)}`);
} finally {
  for (const n of [on, off]) {
    n.child.kill('SIGTERM');
    await new Promise((r) => n.child.once('exit', r));
    rmSync(n.dir, { recursive: true, force: true });
  }
}
