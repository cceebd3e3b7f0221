/** Every config key Fjord defines is documented (DescribeConfigs' IncludeDocumentation), in one sentence of its own. */
import { describe, expect, it } from 'vitest';
import { ConfigScope } from '../../src/config/config-def.js';
import { configDefs, configDoc } from '../../src/config/registry.js';
import { BROKER_CONFIG_DOCS } from '../../src/config/broker-config-docs.js';
import { GROUP_CONFIG_DOCS } from '../../src/config/group-config-docs.js';
import { MIRROR_CONFIG_DOCS } from '../../src/config/mirror-config-docs.js';
import { TOPIC_CONFIG_DOCS } from '../../src/config/topic-config-docs.js';

const DOCS = { BROKER: BROKER_CONFIG_DOCS, TOPIC: TOPIC_CONFIG_DOCS, GROUP: GROUP_CONFIG_DOCS, CLUSTER_MIRROR: MIRROR_CONFIG_DOCS } as const;

describe.each(Object.values(ConfigScope))('%s keys', (scope) => {
  it('each has one sentence of documentation', () => {
    const missing = configDefs(scope).filter((d) => !/^[A-Z][^\n]*\.$/.test(configDoc(scope, d.name) ?? '')).map((d) => d.name);
    expect(missing).toEqual([]);
  });

  it('the docs table names no key the scope does not define', () => {
    const defined = new Set(configDefs(scope).map((d) => d.name));
    expect(Object.keys(DOCS[scope]).filter((k) => !defined.has(k))).toEqual([]);
  });
});

it("a per-listener broker key has the documentation of the key it overrides; a key no scope defines has none", () => {
  expect(configDoc('BROKER', 'listener.name.external.ssl.keystore.location')).toBe(configDoc('BROKER', 'ssl.keystore.location'));
  expect(configDoc('BROKER', 'no.such.key')).toBeNull();
  expect(configDoc('TOPIC', 'min.insync.replicas')).not.toBe(configDoc('BROKER', 'min.insync.replicas'));
});
