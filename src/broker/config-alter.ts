/**
 * Shared by AlterConfigs and IncrementalAlterConfigs: validates changes to a topic or broker
 * resource and writes them as ConfigRecords in one atomic controller write.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { BrokerContext } from './broker-context.js';
import { brokerConfigDef, checkTopicConfig, checkValue } from './config.js';
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import { checkGroupConfig } from './group-configs.js';
import { mirrorConfigValue, splitList } from '../mirror/mirror-config.js';
import { MirrorPartitionState } from '../mirror/mirror-partition-state.js';

interface AlterOutcome {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

const OK: AlterOutcome = { errorCode: 0, errorMessage: null };

/** A listener's SSL key: changing it reconfigures that listener's TLS (Kafka's dynamic SSL update). */
const LISTENER_SSL_KEY = /^listener\.name\.[a-z0-9_]+\.ssl\./;

/** Checks that the resource exists and is alterable here; OK or an error. */
export function checkResource(ctx: BrokerContext, resourceType: number, resourceName: string): AlterOutcome {
  if (resourceType === ConfigResourceType.TOPIC) {
    if (!ctx.image.topic(resourceName)) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic ${resourceName} does not exist.` };
    return OK;
  }
  if (resourceType === ConfigResourceType.BROKER) {
    if (resourceName !== '' && resourceName !== String(ctx.nodeId)) {
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unexpected broker id, expected ${ctx.nodeId} or empty string, but received ${resourceName}` };
    }
    return OK;
  }
  if (resourceType === ConfigResourceType.GROUP) {
    return resourceName === '' ? { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Group name must not be empty' } : OK;
  }
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type ${resourceType}` };
}

function checkChange(ctx: BrokerContext, resourceType: number, name: string, value: string | null): AlterOutcome {
  if (resourceType === ConfigResourceType.GROUP) {
    const err = checkGroupConfig(ctx.configs, name, value);
    return err ? { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: err } : OK;
  }
  if (resourceType === ConfigResourceType.TOPIC) {
    const err = checkTopicConfig(name, value);
    return err ? { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: err } : OK;
  }
  const def = brokerConfigDef(name);
  // Like Kafka, broker keys this node does not know are kept as they are (plugins, security
  // settings of other deployments); only known keys are type-checked.
  if (!def) return OK;
  if (def.readOnly) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Cannot update these configs dynamically: Set(${name})` };
  if (value === null) return OK;
  const err = checkValue(def.type, value, def);
  return err ? { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Invalid value ${value} for configuration ${name}: ${err}` } : OK;
}

/** The current explicit entries of a resource (topic overrides or dynamic broker configs). */
export function currentEntries(ctx: BrokerContext, resourceType: number, resourceName: string): Map<string, string> {
  if (resourceType === ConfigResourceType.TOPIC) return new Map(ctx.image.topic(resourceName)?.configs ?? []);
  if (resourceType === ConfigResourceType.GROUP) return new Map(ctx.image.otherConfigs.get(resourceType)?.get(resourceName) ?? []);
  return new Map(ctx.image.brokerConfigs.get(resourceName) ?? []);
}

/**
 * A mirror topic that is not stopped takes its configs from the source (KIP-1279 §10.1): every
 * key outside its mirror's `mirror.topic.properties.exclude` (and the `mirror.*` keys) is synced,
 * and a change here would be overwritten at the next refresh, so it is refused. Excluded keys
 * stay this cluster's own.
 * A change to the value a key already has is no change (AlterConfigs restates every key).
 */
function syncedKeyRefusal(ctx: BrokerContext, topic: string, changes: ReadonlyArray<readonly [string, string | null]>): AlterOutcome | null {
  const t = ctx.image.topic(topic);
  if (t === undefined || t.mirror === null || t.mirror.desiredState === MirrorPartitionState.STOPPED) return null;
  const cfg = ctx.image.otherConfigs.get(ConfigResourceType.CLUSTER_MIRROR)?.get(t.mirror.mirrorName) ?? new Map<string, string>();
  const local = new Set(splitList(mirrorConfigValue(cfg, 'mirror.topic.properties.exclude')));
  // The mirror.* topic keys say how this cluster mirrors the topic: never the source's.
  const synced = changes.find(([k, v]) => !local.has(k) && !k.startsWith('mirror.') && (t.configs.get(k) ?? null) !== v);
  if (synced === undefined) return null;
  return {
    errorCode: ErrorCode.INVALID_CONFIG,
    errorMessage: `Topic ${topic} is mirrored by ${t.mirror.mirrorName}: ${synced[0]} is synced from the source topic (set it there, or add it to mirror.topic.properties.exclude); it can be changed here once the topic is stopped.`,
  };
}

/**
 * min.insync.replicas with eligible leader replicas on, as a Kafka 4.x cluster starts (KIP-966;
 * ConfigurationControlManager.validateAlterConfig): the cluster-wide value written at bootstrap
 * may be set but never removed, and a node's own value may be neither set nor removed, so every
 * broker reads the one cluster-wide value. Validate-only requests are refused alike.
 */
function minIsrRefusal(resourceName: string, changes: ReadonlyArray<readonly [string, string | null]>): AlterOutcome | null {
  const change = changes.find(([k]) => k === 'min.insync.replicas');
  if (change === undefined) return null;
  if (resourceName !== '') return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Broker-level min.insync.replicas cannot be altered while ELR is enabled.' };
  if (change[1] === null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Cluster-level min.insync.replicas cannot be removed while ELR is enabled.' };
  return null;
}

export async function applyChanges(
  ctx: BrokerContext,
  resourceType: number,
  resourceName: string,
  changes: ReadonlyArray<readonly [string, string | null]>,
  validateOnly: boolean,
): Promise<AlterOutcome> {
  if (resourceType === ConfigResourceType.TOPIC) {
    const refused = syncedKeyRefusal(ctx, resourceName, changes);
    if (refused !== null) return refused;
  }
  for (const [name, value] of changes) {
    const r = checkChange(ctx, resourceType, name, value);
    if (r.errorCode !== 0) return r;
  }
  if (resourceType === ConfigResourceType.BROKER) {
    const refused = minIsrRefusal(resourceName, changes);
    if (refused !== null) return refused;
  }
  const sslKeys = resourceType === ConfigResourceType.BROKER ? changes.map(([k]) => k).filter((k) => LISTENER_SSL_KEY.test(k)) : [];
  if (sslKeys.length > 0 && ctx.listenerTls) {
    // New stores must load before they are written: a bad keystore is refused, the old one kept.
    const proposed = new Map(changes);
    const err = ctx.listenerTls.checkTls((k) => (proposed.has(k) ? (proposed.get(k) ?? ctx.config.get(k)) : ctx.configs.brokerValue(k)));
    if (err !== null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: err };
  }
  if (validateOnly || changes.length === 0) return OK;
  const res = await ctx.controller.alterConfigs(resourceType, resourceName, changes);
  if (res.errorCode === 0 && sslKeys.length > 0) {
    try {
      ctx.listenerTls?.reconfigureTls((k) => ctx.configs.brokerValue(k), sslKeys);
    } catch (err) {
      ctx.log.warn('TLS reconfiguration failed, keeping the previous stores', { err: err instanceof Error ? err.message : String(err) });
    }
  }
  return { errorCode: res.errorCode, errorMessage: res.errorMessage };
}
