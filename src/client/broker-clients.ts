/**
 * One Kafka client per other node of this cluster, for the node-to-node calls (transaction
 * markers to partition leaders, mirror state to its coordinator), as Kafka keeps one channel per
 * destination broker. A node that moved to another address, or whose call failed for want of a
 * connection, gets a fresh client on its next call.
 *
 * Every client connects with the node's inter-broker security (./inter-broker-security.ts), which
 * the node passes in: several nodes in one process each keep their own.
 */
import type { InterBrokerSecurity } from './inter-broker-security.js';
import { KafkaClient } from './kafka-client.js';

export class BrokerClients {
  private readonly clients = new Map<number, { endpoint: string; client: KafkaClient }>();

  /** `requestTimeoutMs`: Kafka's request.timeout.ms default unless the caller needs another. */
  constructor(
    private readonly clientId: string,
    private readonly security: InterBrokerSecurity,
    private readonly requestTimeoutMs = 30_000,
  ) {}

  /** The client for node `nodeId` at `host:port`. */
  clientFor(nodeId: number, host: string, port: number): KafkaClient {
    const endpoint = `${host}:${port}`;
    let entry = this.clients.get(nodeId);
    if (entry === undefined || entry.endpoint !== endpoint) {
      entry?.client.close();
      entry = { endpoint, client: new KafkaClient({ ...this.security, bootstrapServers: [endpoint], clientId: this.clientId, requestTimeoutMs: this.requestTimeoutMs }) };
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
