/**
 * End-transaction markers for partitions led by another node: sent to that node as
 * WriteTxnMarkers, as Kafka's TransactionMarkerChannelManager does, over one inter-broker
 * connection per leader (its registered inter-broker endpoint). The transaction coordinator
 * retries any partition answered with an error, so a leader that moves is simply asked again.
 */
import { BrokerClients } from '../client/broker-clients.js';
import type { ApiSpec } from '../client/apis.js';
import type { TxnMarker } from '../coordinator/coordinator-host.js';
import { ApiKey } from '../protocol/generated/api-table.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { encodeWriteTxnMarkersRequest, type WriteTxnMarkersRequestInput } from '../protocol/generated/messages/write-txn-markers-request.js';
import { decodeWriteTxnMarkersResponse, type WriteTxnMarkersResponse } from '../protocol/generated/messages/write-txn-markers-response.js';
import type { BrokerContext } from './broker-context.js';

const WRITE_TXN_MARKERS: ApiSpec<WriteTxnMarkersRequestInput, WriteTxnMarkersResponse> = {
  apiKey: ApiKey.WriteTxnMarkers,
  versions: [1, 2],
  encode: encodeWriteTxnMarkersRequest,
  decode: decodeWriteTxnMarkersResponse,
};

export class TxnMarkerChannel {
  private readonly clients: BrokerClients;

  constructor(private readonly ctx: BrokerContext) {
    this.clients = new BrokerClients(`fjord-txn-markers-${ctx.nodeId}`, ctx.interBrokerSecurity);
  }

  /** Writes `marker` on `topic`-`partition` through its leader `leaderId`; resolves to that partition's error code. */
  async send(leaderId: number, topic: string, partition: number, marker: TxnMarker): Promise<number> {
    const b = this.ctx.cluster.liveBrokers().find((x) => x.nodeId === leaderId);
    if (b === undefined) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const client = this.clients.clientFor(leaderId, b.host, b.port);
    try {
      const res = await client.send(WRITE_TXN_MARKERS, {
        markers: [{ producerId: BigInt(marker.producerId), producerEpoch: marker.producerEpoch, transactionResult: marker.commit, coordinatorEpoch: marker.coordinatorEpoch, transactionVersion: marker.transactionVersion ?? 0, topics: [{ name: topic, partitionIndexes: [partition] }] }],
      });
      const code = res.markers[0]?.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition)?.errorCode;
      return code ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    } catch {
      // The leader is unreachable (killed, restarting): the coordinator retries after a backoff.
      this.clients.forget(leaderId);
      return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    }
  }

  close(): void {
    this.clients.close();
  }
}
