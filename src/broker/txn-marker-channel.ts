/**
 * End-transaction markers for partitions led by another node: sent to that node as
 * WriteTxnMarkers, as Kafka's TransactionMarkerChannelManager does, over one inter-broker
 * connection per leader (its registered inter-broker endpoint). The transaction coordinator
 * retries any partition answered with an error, so a leader that moves is simply asked again.
 */
import { KafkaClient } from '../client/kafka-client.js';
import type { ApiSpec } from '../client/apis.js';
import type { TxnMarker } from '../coordinator/coordinator-host.js';
import { ApiKey } from '../protocol/generated/api-table.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { encodeWriteTxnMarkersRequest, type WriteTxnMarkersRequestInput } from '../protocol/generated/messages/write-txn-markers-request.js';
import { decodeWriteTxnMarkersResponse, type WriteTxnMarkersResponse } from '../protocol/generated/messages/write-txn-markers-response.js';
import type { BrokerContext } from './broker-context.js';

const WRITE_TXN_MARKERS: ApiSpec<WriteTxnMarkersRequestInput, WriteTxnMarkersResponse> = {
  apiKey: ApiKey.WriteTxnMarkers,
  versions: [1, 1],
  encode: encodeWriteTxnMarkersRequest,
  decode: decodeWriteTxnMarkersResponse,
};

/** Kafka's request.timeout.ms default, which its marker channel uses. */
const REQUEST_TIMEOUT_MS = 30_000;

export class TxnMarkerChannel {
  private readonly clients = new Map<number, { endpoint: string; client: KafkaClient }>();

  constructor(private readonly ctx: BrokerContext) {}

  /** Writes `marker` on `topic`-`partition` through its leader `leaderId`; resolves to that partition's error code. */
  async send(leaderId: number, topic: string, partition: number, marker: TxnMarker): Promise<number> {
    const b = this.ctx.cluster.liveBrokers().find((x) => x.nodeId === leaderId);
    if (b === undefined) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const endpoint = `${b.host}:${b.port}`;
    let entry = this.clients.get(leaderId);
    if (entry === undefined || entry.endpoint !== endpoint) {
      entry?.client.close();
      entry = { endpoint, client: new KafkaClient({ bootstrapServers: [endpoint], clientId: `fjord-txn-markers-${this.ctx.nodeId}`, requestTimeoutMs: REQUEST_TIMEOUT_MS }) };
      this.clients.set(leaderId, entry);
    }
    try {
      const res = await entry.client.send(WRITE_TXN_MARKERS, {
        markers: [{ producerId: BigInt(marker.producerId), producerEpoch: marker.producerEpoch, transactionResult: marker.commit, coordinatorEpoch: marker.coordinatorEpoch, topics: [{ name: topic, partitionIndexes: [partition] }] }],
      });
      const code = res.markers[0]?.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition)?.errorCode;
      return code ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    } catch {
      // The leader is unreachable (killed, restarting): the coordinator retries after a backoff.
      entry.client.close();
      this.clients.delete(leaderId);
      return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    }
  }

  close(): void {
    for (const { client } of this.clients.values()) client.close();
    this.clients.clear();
  }
}
