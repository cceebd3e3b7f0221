/**
 * The configuration registry: every key of every config resource, one table per scope, looked
 * up by scope and name, with the sentence that documents it. DescribeConfigs lists a scope's keys
 * in its table's order.
 */
import { BROKER_CONFIG_DEFS, BROKER_DEFS, brokerDefOf } from './broker-config-defs.js';
import { BROKER_CONFIG_DOCS } from './broker-config-docs.js';
import type { ConfigDef, ConfigScope } from './config-def.js';
import { GROUP_CONFIG_DEFS, GROUP_DEFS } from './group-config-defs.js';
import { GROUP_CONFIG_DOCS } from './group-config-docs.js';
import { MIRROR_CONFIG_DEFS, MIRROR_DEFS } from './mirror-config-defs.js';
import { MIRROR_CONFIG_DOCS } from './mirror-config-docs.js';
import { TOPIC_CONFIG_DEFS, TOPIC_DEFS } from './topic-config-defs.js';
import { TOPIC_CONFIG_DOCS } from './topic-config-docs.js';

const TABLES: Readonly<Record<ConfigScope, { readonly list: readonly ConfigDef[]; readonly byName: ReadonlyMap<string, ConfigDef> }>> = {
  BROKER: { list: BROKER_CONFIG_DEFS, byName: BROKER_DEFS },
  TOPIC: { list: TOPIC_CONFIG_DEFS, byName: TOPIC_DEFS },
  GROUP: { list: GROUP_CONFIG_DEFS, byName: GROUP_DEFS },
  CLUSTER_MIRROR: { list: MIRROR_CONFIG_DEFS, byName: MIRROR_DEFS },
};

const DOCS: Readonly<Record<ConfigScope, Readonly<Record<string, string>>>> = {
  BROKER: BROKER_CONFIG_DOCS,
  TOPIC: TOPIC_CONFIG_DOCS,
  GROUP: GROUP_CONFIG_DOCS,
  CLUSTER_MIRROR: MIRROR_CONFIG_DOCS,
};

/** The keys of a scope, in the order DescribeConfigs reports them. */
export function configDefs(scope: ConfigScope): readonly ConfigDef[] {
  return TABLES[scope].list;
}

/** A key of a scope; undefined when the scope has no such key. */
export function findConfigDef(scope: ConfigScope, name: string): ConfigDef | undefined {
  return TABLES[scope].byName.get(name);
}

/**
 * The documentation of a key (DescribeConfigs v3+ with IncludeDocumentation): one sentence of the
 * scope's docs table; a per-listener broker key has the documentation of the key it overrides.
 * Null for a key the scope does not define.
 */
export function configDoc(scope: ConfigScope, name: string): string | null {
  const def = scope === 'BROKER' ? brokerDefOf(name) : TABLES[scope].byName.get(name);
  return def === undefined ? null : (DOCS[scope][def.name] ?? null);
}
