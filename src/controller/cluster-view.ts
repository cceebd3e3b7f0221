/**
 * What a node knows about the cluster's members: the live broker registrations, the active
 * controller, and whether this node itself is fenced. One node alone is its own cluster
 * (`LocalClusterView`); with `metadata.etcd.endpoints` the view comes from lease-bound etcd keys
 * (`EtcdQuorum`). Kafka keeps these as RegisterBrokerRecord/BrokerRegistrationChangeRecord in the
 * metadata log; Fjord keeps them as etcd keys bound to each node's lease, so a node's loss is seen
 * when its lease expires (Kafka's BrokerHeartbeatManager session timeout).
 */

export interface BrokerEndpoint {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly securityProtocol: string;
}

export interface BrokerRegistration {
  readonly nodeId: number;
  /** The inter-broker listener's advertised address (what Metadata reports). */
  readonly host: string;
  readonly port: number;
  readonly endpoints: readonly BrokerEndpoint[];
  readonly rack: string | null;
  /** A fresh id per process start (Kafka's incarnation id). */
  readonly incarnationId: string;
  /** The registration key's create revision: grows with every (re-)registration. */
  readonly brokerEpoch: number;
}

export type ClusterEvent = 'brokers' | 'controller' | 'fenced' | 'unfenced';

export interface ClusterView {
  /** true when the metadata quorum is etcd (several nodes may exist). */
  readonly distributed: boolean;
  /** Live registrations, by node id ascending. */
  liveBrokers(): readonly BrokerRegistration[];
  isLive(nodeId: number): boolean;
  /** Live and not shutting down: may lead and stay in ISRs (Kafka's controlled shutdown). */
  isEligible(nodeId: number): boolean;
  /**
   * A node not live in this view that may be registering again (KRaft's fresh session for every
   * broker when a controller takes over): the controller leaves it in leaderships and ISRs for
   * now. Absent: never.
   */
  awaitingReturn?(nodeId: number): boolean;
  /** true when this node is the active controller. */
  readonly isActiveController: boolean;
  /** The active controller's node id, -1 while none is elected. */
  controllerId(): number;
  /** The active controller's epoch (its election key's create revision), -1 while none. */
  controllerEpoch(): number;
  /** This node's broker epoch, -1 while unregistered. */
  brokerEpoch(): number;
  /**
   * true while this node has no live registration (its lease expired or could not be renewed):
   * it must not act as leader for anything, nor acknowledge writes.
   */
  readonly fenced: boolean;
  on(event: ClusterEvent, cb: () => void): () => void;
}

/** A node alone: always live, always the controller, never fenced. */
export class LocalClusterView implements ClusterView {
  readonly distributed = false;
  readonly fenced = false;
  readonly isActiveController = true;
  private readonly self: BrokerRegistration;

  constructor(self: Omit<BrokerRegistration, 'brokerEpoch'>) {
    this.self = { ...self, brokerEpoch: 1 };
  }

  liveBrokers(): readonly BrokerRegistration[] {
    return [this.self];
  }

  isLive(nodeId: number): boolean {
    return nodeId === this.self.nodeId;
  }

  isEligible(nodeId: number): boolean {
    return this.isLive(nodeId);
  }

  controllerId(): number {
    return this.self.nodeId;
  }

  controllerEpoch(): number {
    return 1;
  }

  brokerEpoch(): number {
    return 1;
  }

  on(): () => void {
    return () => undefined;
  }
}
