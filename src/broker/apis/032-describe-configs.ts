/**
 * DescribeConfigs (key 32), v1-4.
 *
 * Behavior:
 * - TOPIC (2): every topic config Kafka knows, with its effective value and source (topic
 *   override → dynamic broker → dynamic default → static → default); an invalid name →
 *   INVALID_TOPIC_EXCEPTION, then an unknown topic → UNKNOWN_TOPIC_OR_PARTITION.
 * - BROKER (4): resource name = this node id (all broker keys) or "" (only the dynamic
 *   cluster-wide defaults, as Kafka); another id → INVALID_REQUEST.
 * - GROUP (32, KIP-848): the group config keys, explicit ones with source DYNAMIC_GROUP_CONFIG (8).
 * - CLUSTER_MIRROR (64, KIP-1279): answered by the mirror module when it is wired.
 * - A resource type Kafka's ConfigHelper does not know (anything but TOPIC, BROKER,
 *   BROKER_LOGGER, CLIENT_METRICS, GROUP, and CLUSTER_MIRROR where the mirror is wired) fails the
 *   whole request: every resource INVALID_REQUEST with no configs, as Kafka's error answer.
 * - ConfigurationKeys filters (null = all); synonyms only when IncludeSynonyms.
 * - A sensitive (PASSWORD) key is reported with a null value, in its synonyms too, as Kafka's
 *   ConfigHelper hides them.
 *
 * Version notes: v3+ ConfigType and, with IncludeDocumentation, each key's documentation (one
 * sentence of Fjord's own, src/config/*-config-docs.ts; null for a key Fjord does not define).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeConfigsRequest, type DescribeConfigsRequest } from '../../protocol/generated/messages/describe-configs-request.js';
import { encodeDescribeConfigsResponse, type DescribeConfigsResponseInput } from '../../protocol/generated/messages/describe-configs-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { ConfigSource, typeId, type ResolvedConfig } from '../config-resolver.js';
import { configDoc, findConfigDef } from '../../config/registry.js';
import type { ConfigScope } from '../../config/config-def.js';
import { ConfigResourceType } from '../../protocol/config-resource-type.js';
import { GROUP_CONFIG_DEFS, groupConfigDefault } from '../group-configs.js';
import { topicNameError } from '../../controller/topic-names.js';

type Result = NonNullable<DescribeConfigsResponseInput['results']>[number];

/** The types Kafka's ConfigHelper authorizes before describing (CLIENT_METRICS, 16, has no constant here). */
const KAFKA_DESCRIBABLE_TYPES: ReadonlySet<number> = new Set([ConfigResourceType.TOPIC, ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER, 16, ConfigResourceType.GROUP]);

export interface MirrorConfigDescriber {
  describeMirrorConfig(mirrorName: string): readonly { name: string; value: string | null; isDefault: boolean; isSensitive: boolean }[] | null;
}

export function describeConfigsHandler(ctx: BrokerContext, mirror: () => MirrorConfigDescriber | null): ApiHandler<DescribeConfigsRequest, DescribeConfigsResponseInput> {
  return {
    apiKey: 32,
    minVersion: 1,
    maxVersion: 4,
    decode: decodeDescribeConfigsRequest,
    encode: encodeDescribeConfigsResponse,
    handle(rc, req) {
      const v = rc.apiVersion;
      const known = (type: number): boolean => KAFKA_DESCRIBABLE_TYPES.has(type) || (type === ConfigResourceType.CLUSTER_MIRROR && mirror() !== null);
      if (!req.resources.every((res) => known(res.resourceType))) {
        // Kafka's ConfigHelper throws on such a type while sorting the resources by authorization,
        // and the request's error answer fails every resource.
        const bad = req.resources.find((res) => !known(res.resourceType))!;
        const errorMessage = `Unexpected resource type ${bad.resourceType} for resource ${bad.resourceName}`;
        return { throttleTimeMs: 0, results: req.resources.map((res) => ({ resourceType: res.resourceType, resourceName: res.resourceName, errorCode: ErrorCode.INVALID_REQUEST, errorMessage, configs: [] })) };
      }
      const results: Result[] = [];
      for (const res of req.resources) {
        const base = { resourceType: res.resourceType, resourceName: res.resourceName };
        const fail = (errorCode: number, errorMessage: string): Result => ({ ...base, errorCode, errorMessage, configs: [] });
        let configs: ResolvedConfig[];
        let scope: ConfigScope;
        if (res.resourceType === ConfigResourceType.TOPIC) {
          // Kafka's ConfigHelper validates the name (Topic.validate) before looking the topic up.
          const invalid = topicNameError(res.resourceName);
          if (invalid !== null) {
            results.push(fail(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid));
            continue;
          }
          if (!ctx.image.topic(res.resourceName)) {
            results.push(fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${res.resourceName} does not exist.`));
            continue;
          }
          configs = ctx.configs.describeTopic(res.resourceName);
          scope = 'TOPIC';
        } else if (res.resourceType === ConfigResourceType.BROKER) {
          scope = 'BROKER';
          if (res.resourceName === '') {
            // A key's type is its definition's, as Kafka reports it; UNKNOWN only for a key not defined here.
            configs = [...(ctx.image.brokerConfigs.get('') ?? new Map<string, string>())].map(([name, value]) => {
              const def = findConfigDef('BROKER', name);
              return {
                name,
                value,
                source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                readOnly: false,
                isSensitive: def?.sensitive === true,
                type: def ? typeId(def.type) : 0,
                synonyms: [{ name, value, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG }],
              };
            });
          } else if (res.resourceName === String(ctx.nodeId)) {
            configs = ctx.configs.describeBroker();
          } else {
            results.push(fail(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${ctx.nodeId} or empty string, but received ${res.resourceName}`));
            continue;
          }
        } else if (res.resourceType === ConfigResourceType.GROUP) {
          // Group configs exist for any group name (Kafka does not require the group to exist).
          const own = ctx.image.otherConfigs.get(ConfigResourceType.GROUP)?.get(res.resourceName);
          scope = 'GROUP';
          configs = GROUP_CONFIG_DEFS.map((def) => {
            const name = def.name;
            const set = own?.get(name);
            const dflt = groupConfigDefault(ctx.configs, name);
            const synonyms = [
              ...(set !== undefined ? [{ name, value: set, source: 8 }] : []),
              { name: def.brokerKey ?? name, value: dflt, source: ConfigSource.DEFAULT_CONFIG },
            ];
            return { name, value: set ?? dflt, source: set !== undefined ? 8 : ConfigSource.DEFAULT_CONFIG, readOnly: false, isSensitive: def.sensitive, type: typeId(def.type), synonyms };
          });
        } else if (res.resourceType === ConfigResourceType.CLUSTER_MIRROR && mirror()) {
          const entries = mirror()!.describeMirrorConfig(res.resourceName);
          if (entries === null) {
            results.push(fail(ErrorCode.UNKNOWN_CLUSTER_MIRROR, `Cluster mirror ${res.resourceName} does not exist.`));
            continue;
          }
          scope = 'CLUSTER_MIRROR';
          configs = entries.map((e) => ({
            name: e.name,
            value: e.value,
            source: e.isDefault ? ConfigSource.DEFAULT_CONFIG : ConfigSource.DYNAMIC_TOPIC_CONFIG,
            readOnly: false,
            isSensitive: e.isSensitive,
            type: 0,
            synonyms: [],
          }));
        } else {
          results.push(fail(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${res.resourceType}`));
          continue;
        }
        // An empty key list asks for every key, as a null one does (Kafka's ConfigHelper).
        const keys = res.configurationKeys === null || res.configurationKeys.length === 0 ? null : new Set(res.configurationKeys);
        results.push({
          ...base,
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          configs: configs
            .filter((c) => keys === null || keys.has(c.name))
            .map((c) => ({
              name: c.name,
              value: c.isSensitive ? null : c.value,
              readOnly: c.readOnly,
              configSource: c.source,
              isSensitive: c.isSensitive,
              synonyms: req.includeSynonyms ? c.synonyms.map((s) => ({ name: s.name, value: c.isSensitive ? null : s.value, source: s.source })) : [],
              ...(v >= 3 ? { configType: c.type, documentation: req.includeDocumentation ? configDoc(scope, c.name) : null } : {}),
            })),
        });
      }
      return { throttleTimeMs: 0, results };
    },
  };
}
