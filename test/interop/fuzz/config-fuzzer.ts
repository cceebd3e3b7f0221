/**
 * Config validation compared key by key: every topic key and every broker key Fjord knows (the
 * keys each broker lists in DescribeConfigs), set to values at and beyond its bounds through
 * CreateTopics, IncrementalAlterConfigs and AlterConfigs, all with validateOnly so nothing
 * changes. The error code each broker answers must be the same; Kafka keys Fjord lacks are counted.
 */
import { encodeAlterConfigsRequest } from '../../../src/protocol/generated/messages/alter-configs-request.js';
import { decodeAlterConfigsResponse } from '../../../src/protocol/generated/messages/alter-configs-response.js';
import { encodeCreateTopicsRequest } from '../../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDescribeConfigsRequest } from '../../../src/protocol/generated/messages/describe-configs-request.js';
import { decodeDescribeConfigsResponse } from '../../../src/protocol/generated/messages/describe-configs-response.js';
import { encodeIncrementalAlterConfigsRequest } from '../../../src/protocol/generated/messages/incremental-alter-configs-request.js';
import { decodeIncrementalAlterConfigsResponse } from '../../../src/protocol/generated/messages/incremental-alter-configs-response.js';
import { fuzzKnownDifference } from '../known-differences.js';
import { FuzzConnection } from './connection.js';

export interface ConfigFinding {
  readonly signature: string;
  readonly kafka: string;
  readonly fjord: string;
}

export interface ConfigStats {
  keys: number;
  requests: number;
  topicKeysOnlyKafka: string[];
  brokerKeysOnlyKafka: number;
}

/** Kafka's ConfigType codes in DescribeConfigs v3+. */
const TYPE = { BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7, CLASS: 8, PASSWORD: 9 } as const;

function candidates(type: number, current: string | null): string[] {
  switch (type) {
    case TYPE.INT:
    case TYPE.SHORT:
    case TYPE.LONG:
      return ['-2', '-1', '0', '1', '4', '13', '14', '1023', '1048575', '1048576', '2147483647', '2147483648', '9223372036854775807', 'abc', ''];
    case TYPE.DOUBLE:
      return ['-0.1', '0', '0.5', '1', '1.1', 'abc'];
    case TYPE.BOOLEAN:
      return ['true', 'false', 'yes', ''];
    default:
      return ['abc', '', ...(current !== null && current !== '' ? [current] : [])];
  }
}

interface Described {
  readonly name: string;
  readonly value: string | null;
  readonly readOnly: boolean;
  readonly type: number;
}

async function describe(c: FuzzConnection, resourceType: number, resourceName: string): Promise<Described[]> {
  const r = await c.call(32, 4, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType, resourceName, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4));
  if (typeof r === 'string') throw new Error(`DescribeConfigs ${r}`);
  const res = decodeDescribeConfigsResponse(r, 4).results[0];
  return (res?.configs ?? []).map((x) => ({ name: x.name, value: x.value, readOnly: x.readOnly, type: x.configType }));
}

type Probe = (c: FuzzConnection, key: string, value: string) => Promise<string>;

const createTopic: Probe = async (c, key, value) => {
  const r = await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: 'fz-config-probe', numPartitions: 1, replicationFactor: 1, configs: [{ name: key, value }] }], timeoutMs: 10_000, validateOnly: true }, 7));
  return typeof r === 'string' ? r : String(decodeCreateTopicsResponse(r, 7).topics[0]?.errorCode);
};

const incremental =
  (resourceType: number, resourceName: string): Probe =>
  async (c, key, value) => {
    const r = await c.call(44, 1, (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType, resourceName, configs: [{ name: key, configOperation: 0, value }] }], validateOnly: true }, 1));
    return typeof r === 'string' ? r : String(decodeIncrementalAlterConfigsResponse(r, 1).responses[0]?.errorCode);
  };

const legacy =
  (resourceType: number, resourceName: string): Probe =>
  async (c, key, value) => {
    const r = await c.call(33, 2, (w) => encodeAlterConfigsRequest(w, { resources: [{ resourceType, resourceName, configs: [{ name: key, value }] }], validateOnly: true }, 2));
    return typeof r === 'string' ? r : String(decodeAlterConfigsResponse(r, 2).responses[0]?.errorCode);
  };

export interface ConfigFuzzOptions {
  readonly kafkaPort: number;
  readonly fjordPort: number;
  readonly fixtureTopic: string;
  readonly timeLimitMs: number;
  /** Keys to probe, first to last; all when absent. */
  readonly only?: (scope: 'topic' | 'broker', key: string) => boolean;
}

export async function runConfigFuzz(opts: ConfigFuzzOptions): Promise<{ stats: ConfigStats; findings: ConfigFinding[] }> {
  const [kc, fc] = await Promise.all([FuzzConnection.open(opts.kafkaPort), FuzzConnection.open(opts.fjordPort)]);
  const stats: ConfigStats = { keys: 0, requests: 0, topicKeysOnlyKafka: [], brokerKeysOnlyKafka: 0 };
  const findings: ConfigFinding[] = [];
  const started = Date.now();
  try {
    const [kTopic, fTopic, kBroker, fBroker] = [await describe(kc, 2, opts.fixtureTopic), await describe(fc, 2, opts.fixtureTopic), await describe(kc, 4, '1'), await describe(fc, 4, '1')];
    const fTopicNames = new Set(fTopic.map((d) => d.name));
    const fBrokerNames = new Set(fBroker.map((d) => d.name));
    stats.topicKeysOnlyKafka = kTopic.filter((d) => !fTopicNames.has(d.name)).map((d) => d.name);
    stats.brokerKeysOnlyKafka = kBroker.filter((d) => !fBrokerNames.has(d.name)).length;
    const plan: { scope: 'topic' | 'broker'; d: Described; probes: [string, Probe][] }[] = [];
    for (const d of kTopic) {
      if (!fTopicNames.has(d.name)) continue;
      plan.push({ scope: 'topic', d, probes: [['CreateTopics', createTopic], ['IncrementalAlterConfigs', incremental(2, opts.fixtureTopic)], ['AlterConfigs', legacy(2, opts.fixtureTopic)]] });
    }
    for (const d of kBroker) {
      if (!fBrokerNames.has(d.name)) continue;
      plan.push({ scope: 'broker', d, probes: [['IncrementalAlterConfigs', incremental(4, '1')], ['IncrementalAlterConfigs(default)', incremental(4, '')]] });
    }
    for (const { scope, d, probes } of plan) {
      if (opts.only && !opts.only(scope, d.name)) continue;
      if (Date.now() - started > opts.timeLimitMs) break;
      stats.keys++;
      for (const value of candidates(d.type, d.value)) {
        for (const [op, probe] of probes) {
          const [k, f] = await Promise.all([probe(kc, d.name, value), probe(fc, d.name, value)]);
          stats.requests += 2;
          if (k === f) continue;
          const api = scope === 'topic' ? 'TopicConfig' : 'BrokerConfig';
          if (fuzzKnownDifference(api, 0, d.name, k, f) !== null) continue;
          findings.push({ signature: `${api} ${op} ${d.name}=${JSON.stringify(value)}`, kafka: k, fjord: f });
        }
      }
    }
  } finally {
    kc.close();
    fc.close();
  }
  return { stats, findings };
}
