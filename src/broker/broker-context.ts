/**
 * What API handlers see of the node. Handlers are built by factories taking this context, so
 * each handler file depends on the node's parts, never on the node class itself.
 */
import type { ApiRegistry } from '../server/api-registry.js';
import type { BrokerConfig } from './config.js';
import type { ConfigResolver } from './config-resolver.js';
import type { Controller } from '../controller/controller.js';
import type { ClusterView } from '../controller/cluster-view.js';
import type { Logger } from '../common/logger.js';
import type { MetadataImage } from '../controller/metadata-image.js';
import type { ProducerIdManager } from '../controller/producer-ids.js';
import type { ReplicaManager } from './replica-manager.js';
import type { BrokerQuotas } from '../quota/broker-quotas.js';
import type { BrokerListeners } from '../server/listener-set.js';
import type { InterBrokerSecurity } from '../client/inter-broker-security.js';
import type { TxnPartitionCheck } from './add-partitions-to-txn-manager.js';

export interface ProduceGuard {
  /** false → READ_ONLY_TOPIC (a mirror topic that is not STOPPED, KIP-1279). */
  isProduceAllowed(topic: string, partition: number): boolean;
  /** The error code of a refused write (0 when allowed); without it a refusal is READ_ONLY_TOPIC. */
  produceError?(topic: string, partition: number): number;
}

/**
 * The transaction coordinator's side of a transactional produce (KIP-890): the partition is
 * verified to be in the producer's transaction (V1) or added to it (V2) before its batch is
 * appended (src/broker/add-partitions-to-txn-manager.ts). Resolves to the partition's error code
 * and message for the produce answer, 0 when the batch may be appended.
 */
interface TxnPartitionAdder {
  forProduce(check: TxnPartitionCheck): Promise<{ errorCode: number; errorMessage: string | null }>;
}

export interface BrokerContext {
  readonly nodeId: number;
  readonly clusterId: string;
  readonly config: BrokerConfig;
  /** Effective values and sources (dynamic broker and topic configs included). */
  readonly configs: ConfigResolver;
  readonly controller: Controller;
  /**
   * The cluster's members, the active controller, and whether this node is fenced. The
   * replication side listens to 'fenced' to stop acting as leader (no acknowledgements) while
   * this node has no live registration.
   */
  readonly cluster: ClusterView;
  readonly image: MetadataImage;
  readonly log: Logger;
  readonly registry: ApiRegistry;
  readonly replicas: ReplicaManager;
  /** Producer ids from persisted blocks (InitProducerId, the transaction coordinator). */
  readonly producerIds: ProducerIdManager;
  /** The advertised address of this node (first advertised listener). */
  readonly host: string;
  readonly port: number;
  /** How this node connects to the others' inter-broker listener (TLS, SASL login), as a client. */
  readonly interBrokerSecurity: InterBrokerSecurity;
  /** Client quotas: byte rates, request time and controller mutations (src/quota). */
  readonly quotas: BrokerQuotas;
  /** The listeners' TLS, for AlterConfigs of `listener.name.<l>.ssl.*` keys; null until they are open. */
  readonly listenerTls: Pick<BrokerListeners, 'checkTls' | 'reconfigureTls'> | null;
  /** Set once mirroring is wired; null means every topic is writable. */
  produceGuard: ProduceGuard | null;
  /** Set once the transaction coordinator runs; without it transactional produces are not checked. */
  txnPartitions?: TxnPartitionAdder;
  /**
   * Creates a topic with the broker's defaults when `auto.create.topics.enable` allows it
   * (Metadata with AllowAutoTopicCreation). Returns a Kafka error code.
   */
  autoCreateTopic(name: string): Promise<number>;
}

export const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state', '__mirror_state', '__share_group_state']);
