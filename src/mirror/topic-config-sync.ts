/**
 * Topic config sync (KIP-1279 spec §10.1): for a mirror's active topics, the source's dynamic
 * topic configs (source DYNAMIC_TOPIC_CONFIG) not matched by `mirror.topic.properties.exclude`
 * are SET here when they differ, through the host (the config APIs refuse synced keys on a
 * mirror topic; a host without that seam gets IncrementalAlterConfigs on its own listener).
 * Deletions on the source are not propagated (as in the reference).
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { mirrorConfigValue, splitList } from './mirror-config.js';
import type { MirrorHost } from './mirror-host.js';
import { stillBound } from './partition-growth.js';
import { throwIfRefusedHere } from './sync-refusal.js';

const TOPIC_RESOURCE = 2;
const DYNAMIC_TOPIC_CONFIG = 1;

async function describeTopics(client: KafkaClient, topics: readonly string[], here = false) {
  const res = await client.sendIfSupported(Apis.DescribeConfigs, {
    resources: topics.map((t) => ({ resourceType: TOPIC_RESOURCE, resourceName: t, configurationKeys: null })),
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const out = new Map<string, Map<string, { value: string | null; source: number }>>();
  for (const r of res?.results ?? []) {
    if (here) throwIfRefusedHere(r.errorCode, `DESCRIBE_CONFIGS on topic ${r.resourceName}`);
    if (r.errorCode !== 0) continue;
    out.set(r.resourceName, new Map(r.configs.map((c) => [c.name, { value: c.value, source: c.configSource }])));
  }
  return out;
}

/** One round for one mirror; `topics` limits it (e.g. a topic that just started mirroring). Returns the keys set. */
export async function syncTopicConfigs(mirrorName: string, host: MirrorHost, source: KafkaClient, self: KafkaClient, topics?: readonly string[]): Promise<number> {
  const cfg = host.mirrorConfigs().get(mirrorName);
  if (cfg === undefined) return 0;
  const names =
    topics ??
    host
      .mirrorTopicBindings()
      .filter((b) => b.mirrorName === mirrorName && b.desiredState === 2)
      .map((b) => b.topicName);
  if (names.length === 0) return 0;
  const excluded = new Set(splitList(mirrorConfigValue(cfg, 'mirror.topic.properties.exclude')));
  const src = await describeTopics(source, names);
  const bound = await stillBound(mirrorName, host, source, [...src.keys()]);
  for (const topic of [...src.keys()]) if (!bound.has(topic)) src.delete(topic);
  const local = await describeTopics(self, names, true);
  const resources: { resourceType: number; resourceName: string; configs: { name: string; configOperation: number; value: string }[] }[] = [];
  for (const [topic, entries] of src) {
    const mine = local.get(topic);
    const configs: { name: string; configOperation: number; value: string }[] = [];
    for (const [name, e] of entries) {
      if (e.source !== DYNAMIC_TOPIC_CONFIG || e.value === null || excluded.has(name)) continue;
      if (mine?.get(name)?.value === e.value) continue;
      configs.push({ name, configOperation: 0, value: e.value });
    }
    if (configs.length > 0) resources.push({ resourceType: TOPIC_RESOURCE, resourceName: topic, configs });
  }
  if (resources.length === 0) return 0;
  if (host.alterMirrorTopicConfigs !== undefined) {
    let set = 0;
    for (const r of resources) {
      const out = await host.alterMirrorTopicConfigs(r.resourceName, r.configs.map((c) => [c.name, c.value] as const));
      if (out.errorCode === 0) set += r.configs.length;
    }
    return set;
  }
  const res = await self.sendIfSupported(Apis.IncrementalAlterConfigs, { resources, validateOnly: false });
  let n = 0;
  for (const r of res?.responses ?? []) {
    throwIfRefusedHere(r.errorCode, `ALTER_CONFIGS on topic ${r.resourceName}`);
    if (r.errorCode === 0) n += resources.find((x) => x.resourceName === r.resourceName)?.configs.length ?? 0;
  }
  return n;
}
