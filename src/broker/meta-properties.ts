/**
 * `<data>/meta.properties`, as Kafka writes it: the cluster id is generated once, on the first
 * start of an empty data directory, and a data directory formatted for another node id is
 * refused (Kafka's MetaPropertiesEnsemble check).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config/config-error.js';
import { parseProperties } from '../config/properties.js';
import { newClusterId } from '../controller/controller.js';

export interface MetaProperties {
  readonly clusterId: string;
  readonly nodeId: number;
  readonly directoryId: string;
}

/** The cluster id a data directory was formatted for, null when it is new. */
export function storedClusterId(dataDir: string): string | null {
  const file = join(dataDir, 'meta.properties');
  if (!existsSync(file)) return null;
  return new Map(parseProperties(readFileSync(file, 'utf8'))).get('cluster.id') ?? null;
}

/**
 * `expectedClusterId`: the id the cluster already has (a node joining an etcd cluster adopts it); a data
 * directory formatted for another cluster is refused, as Kafka refuses a mismatched cluster.id.
 */
export function loadOrCreateMetaProperties(dataDir: string, nodeId: number, expectedClusterId?: string): MetaProperties {
  const file = join(dataDir, 'meta.properties');
  if (existsSync(file)) {
    const props = new Map(parseProperties(readFileSync(file, 'utf8')));
    const clusterId = props.get('cluster.id');
    const storedNode = Number(props.get('node.id'));
    if (!clusterId) throw new ConfigError(`${file} has no cluster.id`);
    if (storedNode !== nodeId) {
      throw new ConfigError(`Stored node id ${storedNode} in ${file} doesn't match the configured node.id ${nodeId}`);
    }
    if (expectedClusterId !== undefined && expectedClusterId !== clusterId) {
      throw new ConfigError(`Invalid cluster.id in ${file}. Expected ${expectedClusterId}, but read ${clusterId}`);
    }
    return { clusterId, nodeId, directoryId: props.get('directory.id') ?? '' };
  }
  const meta: MetaProperties = { clusterId: expectedClusterId ?? newClusterId(), nodeId, directoryId: newClusterId() };
  const text = `#\n#${new Date().toString()}\ncluster.id=${meta.clusterId}\ndirectory.id=${meta.directoryId}\nnode.id=${nodeId}\nversion=1\n`;
  writeFileSync(file + '.tmp', text);
  renameSync(file + '.tmp', file);
  return meta;
}
