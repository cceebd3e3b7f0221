/**
 * `fjord configs`: kafka-configs.sh's flags and output (Kafka's `kafka.admin.ConfigCommand`) for
 * topics, brokers and groups: --describe [--all] over DescribeConfigs, --alter --add-config /
 * --delete-config over IncrementalAlterConfigs (SET and DELETE, KIP-339).
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { check, Exit, parseCommand, parseConfigList, runAgainst, usageLine, UsageError, type CommandSpec, type OptionSpecs, type Out } from './cli-common.js';

const CONFIGS = {
  command: 'configs',
  synopsis: `usage: fjord configs --bootstrap-server HOST:PORT --entity-type topics|brokers|groups (--entity-name N | --entity-default) ACTION [--json]

actions (exactly one):
  --describe [--all]                                 the dynamic configs (with --all: every config)
  --alter [--add-config k=v,k2=v2] [--delete-config k,k2]`,
  options: {
    'bootstrap-server': { type: 'string', default: '127.0.0.1:9092' },
    'entity-type': { type: 'string' },
    'entity-name': { type: 'string' },
    'entity-default': { type: 'boolean', default: false },
    describe: { type: 'boolean', default: false },
    alter: { type: 'boolean', default: false },
    all: { type: 'boolean', default: false },
    'add-config': { type: 'string', multiple: true, default: [] },
    'delete-config': { type: 'string', multiple: true, default: [] },
    json: { type: 'boolean', default: false },
  },
  help: {
    'bootstrap-server': ['HOST:PORT', 'the node to ask'],
    'entity-type': ['TYPE', 'topics, brokers or groups'],
    'entity-name': ['N', 'the topic, broker id or group'],
    'entity-default': 'the cluster-wide broker default (brokers only)',
    describe: 'print the dynamic configs',
    alter: 'set and delete configs (IncrementalAlterConfigs)',
    all: 'with --describe: every config, defaults included',
    'add-config': ['k=v,k2=v2', 'configs to set (--alter)'],
    'delete-config': ['k,k2', 'configs to delete, back to their defaults (--alter)'],
    json: 'machine-readable output',
  },
} as const satisfies CommandSpec<OptionSpecs>;

/** ConfigResource.Type codes. */
const ResourceType = { topics: 2, brokers: 4, groups: 32 } as const;
type EntityType = keyof typeof ResourceType;

/** DescribeConfigs' ConfigSource codes by the names ConfigCommand prints (ConfigEntry.ConfigSource). */
const SOURCE_NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'UNKNOWN'],
  [1, 'DYNAMIC_TOPIC_CONFIG'],
  [2, 'DYNAMIC_BROKER_CONFIG'],
  [3, 'DYNAMIC_DEFAULT_BROKER_CONFIG'],
  [4, 'STATIC_BROKER_CONFIG'],
  [5, 'DEFAULT_CONFIG'],
  [6, 'DYNAMIC_BROKER_LOGGER_CONFIG'],
  [7, 'DYNAMIC_CLIENT_METRICS_CONFIG'],
  [8, 'DYNAMIC_GROUP_CONFIG'],
]);

/** IncrementalAlterConfigs operations (AlterConfigOp.OpType). */
const OpType = { SET: 0, DELETE: 1 } as const;

interface ConfigLine {
  name: string;
  value: string | null;
  sensitive: boolean;
  source: string;
  synonyms: { source: string; name: string; value: string | null }[];
}


/** Which source counts as "dynamic" for the entity, as ConfigCommand filters without --all. */
function dynamicSource(type: EntityType, name: string): number {
  if (type === 'topics') return 1;
  if (type === 'groups') return 8;
  return name === '' ? 3 : 2;
}

async function describeEntityConfigs(client: KafkaClient, type: EntityType, name: string, all: boolean): Promise<ConfigLine[]> {
  const res = await client.send(Apis.DescribeConfigs, {
    resources: [{ resourceType: ResourceType[type], resourceName: name, configurationKeys: null }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  const r = res.results[0];
  if (!r) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'DescribeConfigs answered no resource');
  check(r.errorCode, r.errorMessage, `cannot describe ${entityLabel(type, name)}`);
  const wanted = dynamicSource(type, name);
  return r.configs
    .filter((c) => all || c.configSource === wanted)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((c) => ({
      name: c.name,
      value: c.isSensitive ? null : c.value,
      sensitive: c.isSensitive,
      source: SOURCE_NAMES.get(c.configSource) ?? 'UNKNOWN',
      synonyms: c.synonyms.map((s) => ({ source: SOURCE_NAMES.get(s.source) ?? 'UNKNOWN', name: s.name, value: c.isSensitive ? null : s.value })),
    }));
}

async function alterEntityConfigs(client: KafkaClient, type: EntityType, name: string, set: readonly [string, string][], del: readonly string[]): Promise<void> {
  const res = await client.send(Apis.IncrementalAlterConfigs, {
    resources: [{
      resourceType: ResourceType[type],
      resourceName: name,
      configs: [...set.map(([k, v]) => ({ name: k, configOperation: OpType.SET, value: v })), ...del.map((k) => ({ name: k, configOperation: OpType.DELETE, value: null }))],
    }],
    validateOnly: false,
  });
  const r = res.responses[0];
  if (!r) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'IncrementalAlterConfigs answered no resource');
  check(r.errorCode, r.errorMessage, `cannot alter ${entityLabel(type, name)}`);
}

/** ConfigCommand's words for the entity: `topic T`, `broker 1`, `brokers in the cluster`. */
function entityLabel(type: EntityType, name: string): string {
  if (type === 'brokers') return name === '' ? 'brokers in the cluster' : `broker ${name}`;
  return `${type === 'topics' ? 'topic' : 'group'} ${name}`;
}

function formatConfigs(type: EntityType, name: string, all: boolean, lines: readonly ConfigLine[]): string[] {
  const head = name === '' ? `${all ? 'All' : 'Default'} configs for ${entityLabel(type, name)} are:` : `${all ? 'All' : 'Dynamic'} configs for ${entityLabel(type, name)} are:`;
  return [
    head,
    ...lines.map((c) => `  ${c.name}=${c.value ?? 'null'} sensitive=${c.sensitive} synonyms={${c.synonyms.map((s) => `${s.source}:${s.name}=${s.value ?? 'null'}`).join(', ')}}`),
  ];
}

/** `fjord configs`. Returns the exit code; `out`/`err` receive whole lines. */
export async function runConfigsCli(argv: readonly string[], io: { out: Out; err: Out } = { out: (l) => console.log(l), err: (l) => console.error(l) }): Promise<number> {
  let type: EntityType;
  let name: string;
  let describe: boolean;
  let all: boolean;
  let json: boolean;
  let set: [string, string][];
  let del: string[];
  let bootstrap: string;
  try {
    const parsed = parseCommand(CONFIGS, argv, io);
    if ('exit' in parsed) return parsed.exit;
    const { values } = parsed;
    const t = values['entity-type'];
    if (t === undefined || !Object.hasOwn(ResourceType, t)) throw new UsageError('--entity-type must be topics, brokers or groups');
    type = t as EntityType;
    if ((values['entity-name'] !== undefined) === values['entity-default']) throw new UsageError('give exactly one of --entity-name or --entity-default');
    if (values['entity-default'] && type !== 'brokers') throw new UsageError('--entity-default goes with --entity-type brokers');
    name = values['entity-name'] ?? '';
    if (values.describe === values.alter) throw new UsageError('give exactly one of --describe or --alter');
    describe = values.describe;
    all = values.all;
    json = values.json;
    if (all && !describe) throw new UsageError('--all goes with --describe');
    set = values['add-config'].flatMap((c) => parseConfigList(c));
    del = values['delete-config'].flatMap((c) => c.split(',')).map((k) => k.trim()).filter((k) => k !== '');
    if (describe && (set.length > 0 || del.length > 0)) throw new UsageError('--add-config and --delete-config go with --alter');
    if (!describe && set.length === 0 && del.length === 0) throw new UsageError('--alter needs --add-config or --delete-config');
    bootstrap = values['bootstrap-server'];
  } catch (e) {
    io.err(usageLine('configs', (e as Error).message));
    return Exit.USAGE;
  }
  return runAgainst('configs', bootstrap, io.err, 'Error while executing config command', async (client) => {
    if (describe) {
      const lines = await describeEntityConfigs(client, type, name, all);
      if (json) io.out(JSON.stringify(lines, null, 2));
      else for (const l of formatConfigs(type, name, all, lines)) io.out(l);
    } else {
      await alterEntityConfigs(client, type, name, set, del);
      if (json) io.out(JSON.stringify({ entityType: type, entityName: name, set: Object.fromEntries(set), deleted: del }));
      else io.out(name === '' ? 'Completed updating default config for brokers in the cluster.' : `Completed updating config for ${entityLabel(type, name)}.`);
    }
  });
}
