/**
 * `fjord broker-api-versions --bootstrap-server HOST:PORT`: what kafka-broker-api-versions.sh
 * shows — the API versions one node answers with — and the container image's health check: it
 * exits 0 only when the node answered ApiVersions, which is the first thing every Kafka client asks.
 */
import { KafkaConnection } from '../client/kafka-connection.js';
import { configFromEnvironment, readPropertiesFile } from './config-sources.js';
import { ApiKey } from '../protocol/generated/api-table.js';
import { consoleIo, Exit, parseCommand, type CliIo, type CommandSpec, type OptionSpecs } from './cli-common.js';

const BROKER_API_VERSIONS = {
  command: 'broker-api-versions',
  synopsis: `usage: fjord broker-api-versions [--bootstrap-server HOST:PORT | --node-config server.properties [--env-prefix PREFIX]] [--timeout-ms MS] [--json]`,
  options: {
    'bootstrap-server': { type: 'string' },
    'node-config': { type: 'string' },
    'env-prefix': { type: 'string' },
    'timeout-ms': { type: 'string', default: '5000' },
    json: { type: 'boolean', default: false },
  },
  help: {
    'bootstrap-server': ['HOST:PORT', 'the node to ask (default 127.0.0.1:9092)'],
    'node-config': ['FILE', "ask the node at the first listener of this server.properties (with fjord start's --env-prefix), a wildcard host as 127.0.0.1"],
    'env-prefix': ['PREFIX', 'with --node-config: the environment variables that override the file, as for fjord start'],
    'timeout-ms': ['MS', 'how long to wait for the connection and the answer'],
    json: 'machine-readable output',
  },
} as const satisfies CommandSpec<OptionSpecs>;

const apiNames = new Map<number, string>(Object.entries(ApiKey).map(([name, key]) => [key, name]));

/** `host:port`, `[v6]:port` or a bare host (Kafka's default port 9092). */
export function parseHostPort(address: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
  if (m) return { host: m[1]!, port: Number(m[2]) };
  return { host: address, port: 9092 };
}

/**
 * The address of a node's first listener, as its own configuration names it (the environment over
 * the file, the last entry of a key winning as in `fjord start`). A wildcard or empty host is asked
 * on loopback, where a health check runs beside the node.
 */
export function listenerAddressOf(entries: readonly (readonly [string, string])[]): { host: string; port: number } {
  let listeners = 'PLAINTEXT://127.0.0.1:9092';
  for (const [k, v] of entries) if (k === 'listeners') listeners = v;
  const first = listeners.split(',')[0]!.trim();
  const m = /^[A-Za-z0-9_]+:\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(first);
  if (!m) throw new Error(`cannot read a listener from '${first}'`);
  const host = m[1]!.replace(/^\[|\]$/g, '');
  return { host: host === '' || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host, port: Number(m[2]) };
}

export async function runBrokerApiVersionsCli(argv: readonly string[], io: CliIo = consoleIo): Promise<number> {
  const parsed = parseCommand(BROKER_API_VERSIONS, argv, io);
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const timeoutMs = Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    io.err(`fjord broker-api-versions: --timeout-ms expects a positive whole number, got '${values['timeout-ms']}'`);
    return Exit.USAGE;
  }
  let target: { host: string; port: number };
  try {
    if (values['node-config'] !== undefined) {
      if (values['bootstrap-server'] !== undefined) throw new Error('give --bootstrap-server or --node-config, not both');
      const entries = readPropertiesFile(values['node-config']);
      if (values['env-prefix'] !== undefined) entries.push(...configFromEnvironment(process.env, values['env-prefix']));
      target = listenerAddressOf(entries);
    } else {
      target = parseHostPort(values['bootstrap-server'] ?? '127.0.0.1:9092');
    }
  } catch (e) {
    io.err(`fjord broker-api-versions: ${(e as Error).message}`);
    return Exit.USAGE;
  }
  const { host, port } = target;
  let conn: KafkaConnection;
  try {
    conn = await KafkaConnection.connect({ host, port, clientId: 'fjord-broker-api-versions', connectTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs });
  } catch (e) {
    io.err(`fjord broker-api-versions: ${host}:${port}: ${(e as Error).message}`);
    return Exit.KAFKA_ERROR;
  }
  const apis = [...conn.versions.entries()].sort(([a], [b]) => a - b);
  conn.close();
  if (values.json) {
    io.out(JSON.stringify(apis.map(([key, v]) => ({ apiKey: key, name: apiNames.get(key) ?? null, minVersion: v.minVersion, maxVersion: v.maxVersion })), null, 2));
  } else {
    io.out(`${host}:${port} -> (`);
    io.out(apis.map(([key, v]) => `\t${apiNames.get(key) ?? 'Unknown'}(${key}): ${v.minVersion} to ${v.maxVersion}`).join(',\n'));
    io.out(')');
  }
  return Exit.OK;
}
