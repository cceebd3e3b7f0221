/**
 * The configuration registry: every key of every config resource, one table per scope, looked
 * up by scope and name. DescribeConfigs lists a scope's keys in its table's order.
 */
import { BROKER_CONFIG_DEFS, BROKER_DEFS } from './broker-config-defs.js';
import type { ConfigDef, ConfigScope } from './config-def.js';
import { GROUP_CONFIG_DEFS, GROUP_DEFS } from './group-config-defs.js';
import { MIRROR_CONFIG_DEFS, MIRROR_DEFS } from './mirror-config-defs.js';
import { TOPIC_CONFIG_DEFS, TOPIC_DEFS } from './topic-config-defs.js';

const TABLES: Readonly<Record<ConfigScope, { readonly list: readonly ConfigDef[]; readonly byName: ReadonlyMap<string, ConfigDef> }>> = {
  BROKER: { list: BROKER_CONFIG_DEFS, byName: BROKER_DEFS },
  TOPIC: { list: TOPIC_CONFIG_DEFS, byName: TOPIC_DEFS },
  GROUP: { list: GROUP_CONFIG_DEFS, byName: GROUP_DEFS },
  CLUSTER_MIRROR: { list: MIRROR_CONFIG_DEFS, byName: MIRROR_DEFS },
};

/** The keys of a scope, in the order DescribeConfigs reports them. */
export function configDefs(scope: ConfigScope): readonly ConfigDef[] {
  return TABLES[scope].list;
}

/** A key of a scope; undefined when the scope has no such key. */
export function findConfigDef(scope: ConfigScope, name: string): ConfigDef | undefined {
  return TABLES[scope].byName.get(name);
}
