/**
 * The container image as a user runs it (docs/deploy.md), with podman and the image that
 * `bash test/deploy/podman.sh build` made (localhost/fjord:test): one node served to kcat through
 * its port, configured by KAFKA_* variables, healthy by its own health check, stopped by SIGTERM with
 * the clean-shutdown marker written and restarted without log recovery; then three containers on
 * one etcd that elect new leaders when the container leading them is killed, losing no
 * acknowledged write.
 *
 * The single node is reached through its published port, as `docker run -p` users reach it; the
 * three nodes on the host's etcd share the host's network, each on its own loopback port; the
 * Compose file runs on its own bridge network with its service names.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { startEtcd, type RunningEtcd } from '../helpers/etcd.js';
import { freePort, ROOT } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

const IMAGE = 'localhost/fjord:test';
const PODMAN = resolve(ROOT, 'test/deploy/podman.sh');
const RUN = `fjord-it-${process.pid}`;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function sh(cmd: string, args: readonly string[], input?: string, timeoutMs = 60_000): Promise<Result> {
  return new Promise((done) => {
    const child = execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1;
      done({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

async function podman(...args: string[]): Promise<Result> {
  return sh('bash', [PODMAN, ...args], undefined, 120_000);
}

async function ok(r: Promise<Result>, what: string): Promise<string> {
  const res = await r;
  if (res.code !== 0) throw new Error(`${what} failed (exit ${res.code}):\n${res.stderr.slice(-3000)}\n${res.stdout.slice(-2000)}`);
  return res.stdout;
}

const containers: string[] = [];
const volumes: string[] = [];

/** Starts a container of the image (detached) and remembers it for clean-up. */
async function runNode(name: string, volume: string, env: Record<string, string>, network: readonly string[] = ['--network=host']): Promise<void> {
  const args = ['run', '-d', '--name', name, ...network, '--health-interval=disable', '-v', `${volume}:/var/lib/fjord`];
  for (const [k, v] of Object.entries(env)) args.push('-e', `${k}=${v}`);
  if (!containers.includes(name)) containers.push(name);
  if (!volumes.includes(volume)) volumes.push(volume);
  await ok(podman(...args, IMAGE), `podman run ${name}`);
}

async function healthy(name: string): Promise<boolean> {
  return (await podman('healthcheck', 'run', name)).code === 0;
}

async function logsOf(name: string): Promise<string> {
  const r = await podman('logs', name);
  return r.stdout + r.stderr;
}

function kcat(args: readonly string[], input?: string): Promise<Result> {
  return sh('kcat', ['-m', '15', '-X', 'socket.connection.setup.timeout.ms=3000', ...args], input);
}

/**
 * Reads the topic from the start of every partition (kcat, no group) until each acknowledged
 * `partition:offset` has been seen, then checks it holds the acknowledged value.
 */
async function expectEveryAckedRecord(bootstrap: string, topic: string, acked: ReadonlyMap<string, string>): Promise<void> {
  const seen = new Map<string, string>();
  await waitFor(
    'every acknowledged record to be read back',
    async () => {
      const r = await kcat(['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-f', '%p:%o %s\n']);
      for (const line of r.stdout.split('\n')) {
        const [at, value] = line.split(' ');
        if (at !== undefined && value !== undefined) seen.set(at, value);
      }
      return [...acked.keys()].every((k) => seen.has(k));
    },
    60_000,
    500,
  );
  for (const [at, value] of acked) expect(seen.get(at), `record at ${at}`).toBe(value);
}

afterAll(async () => {
  for (const c of containers) await podman('rm', '-f', '-t', '0', c);
  for (const v of volumes) await podman('volume', 'rm', '-f', v);
});

describe('the image, one node', () => {
  const name = `${RUN}-single`;
  const volume = `${RUN}-single-data`;
  let port = 0;
  let metricsPort = 0;

  it('starts from KAFKA_* variables, is healthy, and serves kcat and Prometheus', async () => {
    port = await freePort();
    metricsPort = await freePort();
    // The image's own listeners (0.0.0.0:9092 and metrics on 9404), published on loopback ports.
    await runNode(
      name,
      volume,
      { KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`, KAFKA_NUM_PARTITIONS: '2' },
      ['-p', `127.0.0.1:${port}:9092`, '-p', `127.0.0.1:${metricsPort}:9404`],
    );
    await waitFor('the health check to pass', () => healthy(name), 60_000, 500);

    const boot = `127.0.0.1:${port}`;
    const lines = ['a:apple', 'b:banana', 'c:cherry'];
    await ok(kcat(['-P', '-b', boot, '-t', 'fruit', '-p', '0', '-K:', '-X', 'message.timeout.ms=20000'], lines.join('\n') + '\n'), 'kcat produce');
    const consumed = await ok(kcat(['-C', '-b', boot, '-t', 'fruit', '-p', '0', '-o', 'beginning', '-e', '-c', '3', '-f', '%o %k %s\n']), 'kcat consume');
    expect(consumed.trim().split('\n')).toEqual(['0 a apple', '1 b banana', '2 c cherry']);
    // KAFKA_NUM_PARTITIONS reached the node: the auto-created topic has two partitions.
    const meta = JSON.parse(await ok(kcat(['-L', '-b', boot, '-t', 'fruit', '-J']), 'kcat metadata')) as {
      brokers: { id: number; name: string }[];
      topics: { topic: string; partitions: unknown[] }[];
    };
    expect(meta.brokers).toEqual([{ id: 1, name: `127.0.0.1:${port}` }]);
    expect(meta.topics[0]!.partitions).toHaveLength(2);

    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# TYPE /m);
  });

  it('stops cleanly on SIGTERM and restarts without log recovery, keeping its records', async () => {
    await ok(podman('stop', '-t', '30', name), 'podman stop');
    expect((await ok(podman('inspect', name, '--format', '{{.State.ExitCode}}'), 'inspect')).trim()).toBe('0');
    const first = await logsOf(name);
    expect(first).toContain('"signal":"SIGTERM"');
    expect(first).toContain('shutdown complete');
    const files = await ok(podman('run', '--rm', '-v', `${volume}:/data`, '--entrypoint', 'ls', IMAGE, '-a', '/data'), 'ls the volume');
    expect(files.split('\n')).toContain('.kafka_cleanshutdown');

    await ok(podman('start', name), 'podman start');
    await waitFor('the health check to pass again', () => healthy(name), 60_000, 500);
    const opened = (await logsOf(name)).split('\n').filter((l) => l.includes('opening partition logs'));
    expect(opened).toHaveLength(2);
    expect(opened[1]).toContain('"cleanShutdown":true');
    const consumed = await ok(kcat(['-C', '-b', `127.0.0.1:${port}`, '-t', 'fruit', '-p', '0', '-o', 'beginning', '-e', '-c', '3', '-f', '%o %s\n']), 'kcat consume');
    expect(consumed.trim().split('\n')).toEqual(['0 apple', '1 banana', '2 cherry']);
    await ok(podman('rm', '-f', '-t', '0', name), 'podman rm');
  });
});

describe('three containers on etcd', () => {
  let etcd: RunningEtcd | null = null;
  afterAll(async () => {
    await etcd?.destroy();
  });

  it('elects new leaders when the leading container is killed, losing no acknowledged write', async () => {
    etcd = await startEtcd();
    const ports = [await freePort(), await freePort(), await freePort()];
    const nameOf = (id: number): string => `${RUN}-node-${id}`;
    for (const [i, port] of ports.entries()) {
      const id = i + 1;
      await runNode(nameOf(id), `${RUN}-node-${id}-data`, {
        KAFKA_NODE_ID: String(id),
        KAFKA_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
        KAFKA_METRICS_LISTENER: '',
        KAFKA_METADATA_ETCD_ENDPOINTS: etcd.endpoint,
        KAFKA_BROKER_SESSION_TIMEOUT_MS: '3000',
        KAFKA_BROKER_HEARTBEAT_INTERVAL_MS: '500',
      });
    }
    for (const id of [1, 2, 3]) await waitFor(`node ${id} to be healthy`, () => healthy(nameOf(id)), 60_000, 500);
    const brokers = ports.map((p) => `127.0.0.1:${p}`);
    await ok(
      podman('exec', nameOf(1), 'fjord', 'topics', '--bootstrap-server', brokers[0]!, '--create', '--topic', 'orders', '--partitions', '3', '--replication-factor', '3'),
      'fjord topics --create inside a container',
    );

    const kafka = new Kafka({ clientId: 'image-test', brokers, logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 200, maxRetryTime: 2000 } });
    const admin = kafka.admin();
    await admin.connect();
    const leaders = async (): Promise<Map<number, number>> => {
      const md = await admin.fetchTopicMetadata({ topics: ['orders'] });
      return new Map(md.topics[0]!.partitions.map((p) => [p.partitionId, p.leader]));
    };
    const inSync = async (): Promise<boolean> => {
      const md = await admin.fetchTopicMetadata({ topics: ['orders'] });
      return md.topics[0]!.partitions.every((p) => p.isr.length === 3);
    };
    await waitFor('every partition to have three replicas in sync', inSync, 60_000, 500);

    const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const acked = new Map<string, string>();
    const send = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i++) {
        const value = `order-${i}`;
        const [meta] = await producer.send({ topic: 'orders', acks: -1, messages: [{ key: String(i), value }] });
        acked.set(`${meta!.partition}:${meta!.baseOffset}`, value);
      }
    };
    await send(0, 60);

    const before = await leaders();
    const victim = before.get(0)!;
    await ok(podman('kill', '-s', 'KILL', nameOf(victim)), `podman kill node ${victim}`);
    await waitFor(
      `partitions led by node ${victim} to move`,
      async () => {
        const now = await leaders().catch(() => null);
        return now !== null && [...now.values()].every((l) => l !== victim && l >= 0);
      },
      60_000,
      500,
    );
    await send(60, 120);
    await producer.disconnect();

    await admin.disconnect();

    // Read back through the survivors, partition by partition, from the start of each log.
    const survivors = brokers.filter((_, i) => i + 1 !== victim).join(',');
    await expectEveryAckedRecord(survivors, 'orders', acked);
    expect(acked.size).toBe(120);
  });
});

describe('the Compose file (deploy/compose/compose.yaml), with podman-compose', () => {
  const project = `fjordcompose${process.pid}`;
  const compose = (...args: string[]): Promise<Result> =>
    new Promise((done) => {
      execFile(
        'podman-compose',
        ['-p', project, '-f', resolve(ROOT, 'deploy/compose/compose.yaml'), ...args],
        {
          timeout: 180_000,
          maxBuffer: 16 << 20,
          env: { ...process.env, CONTAINERS_CONF: resolve(ROOT, '.cache/deploy/containers.conf'), FJORD_IMAGE: IMAGE, ETCD_IMAGE: 'localhost/etcd:debian' },
        },
        (err, stdout, stderr) => done({ code: err === null ? 0 : 1, stdout, stderr }),
      );
    });
  const node = (n: number): string => `${project}_fjord-${n}_1`;
  afterAll(async () => {
    await compose('down', '-v', '-t', '0');
    await podman('network', 'rm', '-f', `${project}_default`);
  });

  it('forms a cluster on its network, and a rolling restart under acks=all load loses no acknowledged write', async () => {
    await ok(compose('up', '-d'), 'podman-compose up');
    for (const n of [1, 2, 3]) await waitFor(`fjord-${n} to be healthy`, () => healthy(node(n)), 90_000, 500);
    const fjordCli = (n: number, ...args: string[]): Promise<Result> => podman('exec', node(n), 'fjord', ...args);
    await ok(fjordCli(1, 'topics', '--bootstrap-server', 'fjord-1:9092', '--create', '--topic', 'orders', '--partitions', '6', '--replication-factor', '3'), 'create orders');
    const underReplicated = async (via: number): Promise<string | null> => {
      const r = await fjordCli(via, 'topics', '--bootstrap-server', `fjord-${via}:9092`, '--describe', '--under-replicated-partitions');
      return r.code === 0 ? r.stdout.trim() : null;
    };
    await waitFor('every replica in sync', async () => (await underReplicated(1)) === '', 60_000, 500);

    // The host reaches the nodes through their published EXTERNAL listeners.
    const kafka = new Kafka({
      clientId: 'compose-test',
      brokers: ['localhost:19092', 'localhost:29092', 'localhost:39092'],
      logLevel: logLevel.NOTHING,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const acked = new Map<string, string>();
    let failed = 0;
    let running = true;
    const load = (async () => {
      for (let i = 0; running; i++) {
        const value = `order-${i}`;
        try {
          const [meta] = await producer.send({ topic: 'orders', acks: -1, messages: [{ key: String(i), value }] });
          acked.set(`${meta!.partition}:${meta!.baseOffset}`, value);
        } catch {
          failed++; // not acknowledged: promises nothing
        }
      }
    })();

    for (const n of [1, 2, 3]) {
      const before = acked.size;
      await waitFor(`writes before restarting fjord-${n}`, () => acked.size >= before + 20, 60_000, 100);
      await ok(podman('restart', '-t', '60', node(n)), `restart fjord-${n}`);
      await waitFor(`fjord-${n} healthy again`, () => healthy(node(n)), 90_000, 500);
      const via = n === 3 ? 1 : n + 1;
      await waitFor(`no under-replicated partition after restarting fjord-${n}`, async () => (await underReplicated(via)) === '', 90_000, 500);
      expect((await logsOf(node(n))).split('\n').filter((l) => l.includes('opening partition logs')).pop()).toContain('"cleanShutdown":true');
    }
    const after = acked.size;
    await waitFor('writes after the rolling restart', () => acked.size >= after + 20, 60_000, 100);
    running = false;
    await load;
    await producer.disconnect();

    await expectEveryAckedRecord('localhost:19092', 'orders', acked);
    expect(acked.size).toBeGreaterThan(80);
    expect(failed, 'sends that failed after their retries').toBeLessThan(acked.size);
  });
});
