/**
 * Config resource types, as DescribeConfigs, AlterConfigs, IncrementalAlterConfigs and
 * ConfigRecords carry them (Kafka's ConfigResource.Type ids; CLUSTER_MIRROR is KIP-1279's).
 */
export const ConfigResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, GROUP: 32, CLUSTER_MIRROR: 64 } as const;
