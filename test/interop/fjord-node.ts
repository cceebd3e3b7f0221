/**
 * Starts a Fjord node the way an operator does (`node bin/fjord.js start --override ...`) on a free
 * loopback port with a temporary data directory, waits until the port accepts and ApiVersions
 * answers, and stops it with SIGTERM. dist/ must be built first (the interop global setup does it).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib/paths.js';
import { ManagedProcess } from './lib/process.js';
import { freePort, waitServing } from './lib/net.js';
import type { Target } from './lib/target.js';

export interface FjordNodeOptions {
  /** Kafka config keys passed as `--override key=value` after the harness's own. */
  readonly overrides?: Readonly<Record<string, string>>;
  /** A server.properties file passed as `--config`. */
  readonly configFile?: string;
  readonly keepData?: boolean;
  /** How long to wait for ApiVersions (default 30 s). */
  readonly startTimeoutMs?: number;
}

export interface FjordNode extends Target {
  readonly logFile: string;
  readonly process: ManagedProcess;
}

/** The same single-node expectations the Apache Kafka side is started with (see kafka-broker.ts). */
const DEFAULT_OVERRIDES: Readonly<Record<string, string>> = {
  'num.partitions': '4',
  'auto.create.topics.enable': 'true',
  'offsets.topic.replication.factor': '1',
  'transaction.state.log.replication.factor': '1',
  'transaction.state.log.min.isr': '1',
  'share.coordinator.state.topic.replication.factor': '1',
  'share.coordinator.state.topic.min.isr': '1',
  'delete.topic.enable': 'true',
  'num.network.threads': '2',
  'num.io.threads': '4',
  'group.initial.rebalance.delay.ms': '0',
  // As on the Kafka side: an authorizer, so the ACL APIs store ACLs (librdkafka's 0081 creates,
  // describes and deletes them; without one they answer SECURITY_DISABLED), and the anonymous
  // PLAINTEXT principal a super user, so nothing else is restricted.
  'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
  'super.users': 'User:ANONYMOUS',
};

export async function startFjordNode(opts: FjordNodeOptions = {}): Promise<FjordNode> {
  const entry = join(ROOT, 'dist/cli/main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: Fjord is not built`);
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-interop-node-'));
  const port = await freePort();
  const overrides: Record<string, string> = {
    ...DEFAULT_OVERRIDES,
    ...opts.overrides,
    listeners: `PLAINTEXT://127.0.0.1:${port}`,
    'log.dirs': join(dataDir, 'logs'),
    'node.id': '1',
  };
  const args = [join(ROOT, 'bin/fjord.js'), 'start'];
  if (opts.configFile !== undefined) args.push('--config', opts.configFile);
  for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
  const logFile = join(dataDir, 'fjord.log');
  const proc = new ManagedProcess('fjord', process.execPath, args, logFile, { cwd: ROOT });
  const stop = async (): Promise<void> => {
    await proc.stop();
    if (!opts.keepData) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitServing('127.0.0.1', port, opts.startTimeoutMs ?? 30_000, () => proc.deadReason());
  } catch (e) {
    await stop();
    throw new Error(`Fjord node did not start: ${(e as Error).message}`);
  }
  return {
    name: 'fjord',
    kind: 'fjord',
    host: '127.0.0.1',
    port,
    bootstrap: `127.0.0.1:${port}`,
    dataDir,
    logFile,
    process: proc,
    stop,
  };
}
