/**
 * One Kafka client per other node of this cluster, for the node-to-node calls (transaction
 * markers to partition leaders, mirror state to its coordinator), as Kafka keeps one channel per
 * destination broker. A node that moved to another address, or whose call failed for want of a
 * connection, gets a fresh client on its next call.
 *
 * Every client connects with the node's inter-broker security (./inter-broker-security.ts): the
 * one given, else the one the node set for this process with `setInterBrokerSecurity` at start
 * (a `fjord start` process is one node; nodes sharing a process share it).
 */
import { PLAINTEXT_INTER_BROKER, type InterBrokerSecurity } from './inter-broker-security.js';
import { KafkaClient } from './kafka-client.js';

let processSecurity: InterBrokerSecurity = PLAINTEXT_INTER_BROKER;

/** Sets the inter-broker security of this process's node (called once the listeners are planned). */
export function setInterBrokerSecurity(security: InterBrokerSecurity): void {
  processSecurity = security;
}

/** The inter-broker security of this process's node. */
export function currentInterBrokerSecurity(): InterBrokerSecurity {
  return processSecurity;
}

export class BrokerClients {
  private readonly clients = new Map<number, { endpoint: string; client: KafkaClient }>();

  /** `requestTimeoutMs`: Kafka's request.timeout.ms default unless the caller needs another. */
  constructor(
    private readonly clientId: string,
    private readonly requestTimeoutMs = 30_000,
    private readonly security: () => InterBrokerSecurity = currentInterBrokerSecurity,
  ) {}

  /** The client for node `nodeId` at `host:port`. */
  clientFor(nodeId: number, host: string, port: number): KafkaClient {
    const endpoint = `${host}:${port}`;
    let entry = this.clients.get(nodeId);
    if (entry === undefined || entry.endpoint !== endpoint) {
      entry?.client.close();
      entry = { endpoint, client: new KafkaClient({ ...this.security(), bootstrapServers: [endpoint], clientId: this.clientId, requestTimeoutMs: this.requestTimeoutMs }) };
      this.clients.set(nodeId, entry);
    }
    return entry.client;
  }

  /** Drops node `nodeId`'s client (killed, restarting, cut off): the next call connects afresh. */
  forget(nodeId: number): void {
    this.clients.get(nodeId)?.client.close();
    this.clients.delete(nodeId);
  }

  close(): void {
    for (const { client } of this.clients.values()) client.close();
    this.clients.clear();
  }
}
