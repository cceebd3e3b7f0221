/**
 * Observability end to end, with real processes on loopback: two Fjord nodes (A the source, B
 * mirroring A) with `metrics.listener` on, kafkajs producing and consuming, the `fjord` CLI
 * creating and describing the mirror, Prometheus itself scraping both nodes, and headless
 * Chromium reading the status page.
 *
 * What a user would notice: the byte and message counters move by what the producer sent (the
 * bytes that landed in the segment files), group lag reaches 0 once the consumer committed, the
 * mirror gauges say what `fjord cluster-mirrors --describe --json` says, a PromQL query over
 * Prometheus's own scrapes returns the same, and the page shows the same states and lags.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, startNode, type RunningNode } from '../helpers/node.js';
import { pick, scrape, total } from './scrape.js';
import { waitFor } from '../helpers/wait.js';

const TOPIC = 'orders';
const work = mkdtempSync(join(tmpdir(), 'fjord-metrics-'));
let a: RunningNode;
let b: RunningNode;
let metricsA: number;
let metricsB: number;

interface Described {
  mirror: string;
  topic: string;
  partition: number;
  sourceOffset: number;
  destinationOffset: number;
  lag: number;
  state: string;
}

function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/fjord.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}

async function describeMirror(): Promise<Described[]> {
  const r = await run(['cluster-mirrors', '--bootstrap-server', b.bootstrap, '--describe', '--mirror', 'm1', '--json']);
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out) as Described[];
}

function client(node: RunningNode): Kafka {
  return new Kafka({ clientId: 'metrics-test', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
}

async function produce(node: RunningNode, from: number, count: number): Promise<void> {
  const p = client(node).producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    await p.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ partition: (from + i) % 2, key: `k${from + i}`, value: `order ${from + i}` })) });
  } finally {
    await p.disconnect();
  }
}

/** Bytes of the topic's segment files on disk: what the producers' batches added up to. */
function segmentBytes(node: RunningNode): number {
  let n = 0;
  for (const p of [0, 1]) {
    const dir = join(node.dataDir, `${TOPIC}-${p}`);
    for (const f of readdirSync(dir)) if (f.endsWith('.log')) n += statSync(join(dir, f)).size;
  }
  return n;
}

beforeAll(async () => {
  [metricsA, metricsB] = [await freePort(), await freePort()];
  const fast = { 'mirror.metadata.refresh.interval.ms': 1000, 'mirror.failed.retry.initial.backoff.ms': 200 };
  [a, b] = await Promise.all([
    startNode({ overrides: { ...fast, 'metrics.listener': `http://127.0.0.1:${metricsA}` } }),
    startNode({ overrides: { ...fast, 'metrics.listener': `http://127.0.0.1:${metricsB}` } }),
  ]);
  const admin = client(a).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

describe('metrics during a produce', () => {
  it('count the bytes and records the producer sent, and the time of each request', async () => {
    await produce(a, 0, 40);
    const s = await scrape(metricsA);
    const onDisk = segmentBytes(a);
    expect(onDisk).toBeGreaterThan(0);
    expect(total(s, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: TOPIC })).toBe(onDisk);
    expect(total(s, 'kafka_server_brokertopicmetrics_messagesin_total', { topic: TOPIC })).toBe(40);
    expect(total(s, 'kafka_server_brokertopicmetrics_failedproducerequests_total', { topic: TOPIC })).toBe(0);
    expect(total(s, 'kafka_log_log_size', { topic: TOPIC })).toBe(onDisk);
    expect(total(s, 'kafka_log_log_logendoffset', { topic: TOPIC })).toBe(40);
    expect(total(s, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' })).toBeGreaterThanOrEqual(1);
    expect(total(s, 'kafka_network_requestmetrics_totaltimems_count', { request: 'Produce' })).toBe(total(s, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' }));
    // acks=-1 is answered after the fsync, so every produce made the flush histogram move.
    expect(total(s, 'kafka_log_logflushstats_logflushrateandtimems_count')).toBeGreaterThanOrEqual(1);
    expect(total(s, 'kafka_server_replicamanager_leadercount')).toBeGreaterThanOrEqual(2);
    expect(total(s, 'kafka_server_replicamanager_underreplicatedpartitions')).toBe(0);
    expect(total(s, 'kafka_controller_kafkacontroller_offlinepartitionscount')).toBe(0);
    expect(pick(s, 'nodejs_heap_size_used_bytes')[0]!.value).toBeGreaterThan(0);
    expect(pick(s, 'nodejs_eventloop_lag_seconds')).toHaveLength(1);
    expect(pick(s, 'nodejs_eventloop_utilization')).toHaveLength(1);
  });

  it('count the bytes a consumer fetched, and its group lag falls to 0 once it committed', async () => {
    const consumer = client(a).consumer({ groupId: 'billing', maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    let seen = 0;
    await consumer.run({ eachMessage: async () => void seen++ });
    try {
      await waitFor('the group committed everything', async () => {
        const s = await scrape(metricsA);
        const lags = pick(s, 'kafka_consumergroup_lag', { consumergroup: 'billing', topic: TOPIC });
        return seen === 40 && lags.length === 2 && lags.every((l) => l.value === 0);
      });
    } finally {
      await consumer.disconnect();
    }
    const s = await scrape(metricsA);
    expect(total(s, 'kafka_server_brokertopicmetrics_bytesout_total', { topic: TOPIC })).toBeGreaterThanOrEqual(segmentBytes(a));
    expect(total(s, 'kafka_coordinator_group_groupmetadatamanager_numgroups')).toBe(1);
    expect(total(s, 'kafka_coordinator_group_groupmetadatamanager_numoffsets')).toBe(2);
  });
});

describe('metrics during a mirror catch-up', () => {
  it('follow DescribeClusterMirrors: lag 0, states, offsets, fetched bytes', async () => {
    const file = join(work, 'm1.properties');
    writeFileSync(file, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.socket.timeout.ms=2000\n`);
    const cli = (...args: string[]) => run(['cluster-mirrors', '--bootstrap-server', b.bootstrap, ...args]);
    expect((await cli('--create', '--mirror', 'm1', '--mirror-config', file)).code).toBe(0);
    expect((await cli('--start', '--mirror', 'm1', '--topics', TOPIC)).code).toBe(0);
    let described: Described[] = [];
    await waitFor('B caught up with A', async () => {
      described = await describeMirror();
      return described.length === 2 && described.every((p) => p.state === 'MIRRORING' && p.lag === 0 && p.destinationOffset === 20);
    });
    const s = await scrape(metricsB);
    for (const p of described) {
      const labels = { mirror: 'm1', topic: TOPIC, partition: String(p.partition) };
      expect(total(s, 'fjord_mirror_partition_lag_records', labels)).toBe(p.lag);
      expect(total(s, 'fjord_mirror_partition_lag_seconds', labels)).toBe(0);
      expect(total(s, 'fjord_mirror_partition_destination_offset', labels)).toBe(p.destinationOffset);
      expect(total(s, 'fjord_mirror_partition_source_offset', labels)).toBe(p.sourceOffset);
      expect(pick(s, 'fjord_mirror_partition_last_fetch_age_seconds', labels)).toHaveLength(1);
    }
    expect(total(s, 'fjord_mirror_partitions', { mirror: 'm1', state: 'MIRRORING' })).toBe(described.length);
    expect(total(s, 'fjord_mirror_partitions', { mirror: 'm1', state: 'FAILED' })).toBe(0);
    expect(total(s, 'fjord_mirror_fetch_bytes_total', { mirror: 'm1' })).toBeGreaterThanOrEqual(segmentBytes(a));
    expect(total(s, 'fjord_mirror_fetches_total', { mirror: 'm1' })).toBeGreaterThan(0);
    expect(pick(s, 'fjord_mirror_sync_errors_total', { mirror: 'm1' }).map((e) => e.labels['kind']).sort()).toEqual(['acls', 'group_offsets', 'metadata_refresh', 'topic_configs']);
  });

  it('count a produce refused by the read-only mirror topic as failed', async () => {
    await expect(produce(b, 0, 1)).rejects.toThrow();
    const s = await scrape(metricsB);
    expect(total(s, 'kafka_server_brokertopicmetrics_failedproducerequests_total', { topic: TOPIC })).toBe(1);
    expect(total(s, 'kafka_server_brokertopicmetrics_bytesrejected_total', { topic: TOPIC })).toBeGreaterThan(0);
    expect(total(s, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: TOPIC })).toBe(0);
  });

  it('follow the source again after more writes', async () => {
    await produce(a, 40, 10);
    let described: Described[] = [];
    await waitFor('B caught up again', async () => {
      described = await describeMirror();
      return described.every((p) => p.lag === 0 && p.destinationOffset === 25);
    });
    const s = await scrape(metricsB);
    expect(total(s, 'fjord_mirror_partition_destination_offset', { mirror: 'm1' })).toBe(50);
    expect(Math.max(...pick(s, 'fjord_mirror_partition_lag_records', { mirror: 'm1' }).map((x) => x.value))).toBe(0);
  });
});

describe('Prometheus scraping the nodes', () => {
  let prometheus: ChildProcess | undefined;
  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus!.once('exit', r));
      prometheus.kill('SIGTERM');
      await exited;
    }
  });

  it('answers PromQL over what it scraped', async () => {
    const port = await freePort();
    const dir = join(work, 'prometheus');
    mkdirSync(dir);
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: fjord\n    static_configs:\n      - targets: ['127.0.0.1:${metricsA}', '127.0.0.1:${metricsB}']\n`,
    );
    let stderr = '';
    prometheus = spawn('/usr/bin/prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    prometheus.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const query = async (q: string): Promise<string | undefined> => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = (await res.json()) as { status: string; data: { result: { value: [number, string] }[] } };
      return body.data.result[0]?.value[1];
    };
    try {
      // Both targets up and each scraped since the topic had its records.
      await waitFor(
        'Prometheus scraped both nodes',
        async () => (await query('count(up == 1)')) === '2' && (await query(`count(kafka_server_brokertopicmetrics_messagesin_total{topic="${TOPIC}"})`)) !== undefined && (await query('count(fjord_mirror_partition_lag_records)')) === '2',
        90_000,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${stderr.slice(-2000)}`);
    }
    expect(await query('max(fjord_mirror_partition_lag_records{mirror="m1"})')).toBe('0');
    expect(await query('sum(fjord_mirror_partitions{mirror="m1",state="MIRRORING"})')).toBe('2');
    expect(await query(`sum(kafka_server_brokertopicmetrics_messagesin_total{topic="${TOPIC}",instance="127.0.0.1:${metricsA}"})`)).toBe('50');

    // Every query of the Grafana dashboard in ops/ parses, and every series it names is exported.
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'ops/grafana-dashboard.json'), 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr.replace(/\$__rate_interval/g, '1m').replace(/\$(instance|mirror|request)/g, '.*'));
    expect(exprs.length).toBeGreaterThan(20);
    // A series is exported when it has samples or is declared (a gauge with no FAILED partition has none).
    const exported = new Set([...(await scrape(metricsA)), ...(await scrape(metricsB))].map((x) => x.name));
    for (const p of [metricsA, metricsB]) for (const [, name] of (await (await fetch(`http://127.0.0.1:${p}/metrics`)).text()).matchAll(/^# TYPE (\S+)/gm)) exported.add(name!);
    for (const expr of exprs) {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`);
      expect(((await res.json()) as { status: string }).status, expr).toBe('success');
      for (const [name] of expr.matchAll(/\b(?:kafka|fjord|nodejs)_[a-z0-9_]+/g)) expect(exported.has(name), `${name} in ${expr}`).toBe(true);
    }
  }, 120_000);
});

describe('the status page in a browser', () => {
  it('shows the mirror states and lags describe reports, and refreshes itself', async () => {
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
      await page.goto(`http://127.0.0.1:${metricsB}/status`);
      const described = await describeMirror();
      const rows = await page.$$eval('tr[data-mirror="m1"]', (trs) =>
        trs.map((tr) => ({
          topic: tr.getAttribute('data-topic'),
          partition: Number(tr.getAttribute('data-partition')),
          state: tr.querySelector('.state')?.textContent,
          lag: Number(tr.querySelector('.lag-records')?.textContent),
          lagSeconds: tr.querySelector('.lag-seconds')?.textContent,
        })),
      );
      expect(rows).toEqual(described.map((p) => ({ topic: p.topic, partition: p.partition, state: p.state, lag: p.lag, lagSeconds: '0.0' })));
      expect(await page.textContent('article[data-mirror="m1"] [data-state="MIRRORING"] .count')).toBe(String(described.length));
      expect(await page.textContent('article[data-mirror="m1"] .source')).toBe(a.bootstrap);
      expect(await page.$$eval(`#topics tr[data-topic="${TOPIC}"] .leader`, (tds) => tds.map((td) => td.textContent))).toEqual(['1', '1']);

      // The page on A shows the consumer group and its lag.
      const pageA = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await pageA.goto(`http://127.0.0.1:${metricsA}/status`);
      expect(await pageA.textContent('#groups tr.group[data-group="billing"] .lag')).toBe('10');

      const first = await page.getAttribute('#generated', 'data-generated');
      await waitFor('the page refreshed itself', async () => (await page.getAttribute('#generated', 'data-generated')) !== first, 30_000);
      const dir = join(ROOT, '.cache', 'artifacts');
      mkdirSync(dir, { recursive: true });
      const shot = join(dir, 'status-page.png');
      await page.screenshot({ path: shot, fullPage: true });
      console.log(`status page screenshot: ${shot}`);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
