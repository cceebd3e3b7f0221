import { createServer, type Server, type Socket } from 'node:net';
import { FrameDecoder } from '../../src/protocol/frame-decoder.js';
import { API_TABLE, ApiKey } from '../../src/protocol/generated/api-table.js';
import { decodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { encodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { decodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { encodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { decodeApiVersionsRequest } from '../../src/protocol/generated/messages/api-versions-request.js';
import { encodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { decodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { encodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { decodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { encodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { decodeRequestHeader } from '../../src/protocol/generated/messages/request-header.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';

/**
 * A tiny Kafka endpoint on 127.0.0.1 that lets real clients produce to it and records every
 * request frame they send, for golden-byte fixtures. It answers ApiVersions, Metadata (itself as
 * broker 1, leader of every partition) and Produce (success, offsets counting from 0), using the
 * generated codecs. With `serve`, it also answers ListOffsets and Fetch from a fixed records
 * blob for partition 0, so real consumers can read batches we built. Any other API closes the
 * connection.
 */
export interface CapturedFrame {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  /** The whole request frame without its int32 size prefix. */
  readonly frame: Buffer;
}

export interface CaptureOptions {
  readonly topics: readonly string[];
  readonly partitions: number;
  /** Version ranges advertised in ApiVersions. */
  readonly versions?: Partial<Record<'apiVersions' | 'metadata' | 'produce' | 'fetch', readonly [number, number]>>;
  /** Record batches served from offset 0 of partition 0 of every topic (Fetch, ListOffsets). */
  readonly serve?: Buffer;
}

const TOPIC_ID = '5f3c1b2a-0d4e-4f60-8a71-9b2c3d4e5f60';
const CLUSTER_ID = 'fjord-capture-cluster';

export class CaptureListener {
  readonly frames: CapturedFrame[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly nextOffset = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly options: CaptureOptions,
  ) {}

  static async start(options: CaptureOptions): Promise<CaptureListener> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no TCP address');
    const listener = new CaptureListener(server, addr.port, options);
    server.on('connection', (s) => listener.accept(s));
    return listener;
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private servedEnd(): number {
    let end = 0;
    for (const b of iterateBatches(this.options.serve ?? Buffer.alloc(0))) end = b.lastOffset + 1;
    return end;
  }

  /** The served batches from the one holding `offset` on (whole batches, as Kafka returns them). */
  private servedFrom(offset: number): Buffer {
    const blob = this.options.serve ?? Buffer.alloc(0);
    for (const b of iterateBatches(blob)) if (b.lastOffset >= offset) return blob.subarray(b.offset);
    return Buffer.alloc(0);
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const decoder = new FrameDecoder(64 * 1024 * 1024);
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of decoder.push(chunk)) {
          const reply = this.handle(Buffer.from(frame));
          if (reply === null) {
            socket.destroy();
            return;
          }
          if (reply.length > 0) socket.write(reply);
        }
      } catch {
        socket.destroy();
      }
    });
  }

  /** The response frame (with size prefix), an empty Buffer for none (acks=0), or null to close. */
  private handle(frame: Buffer): Buffer | null {
    const apiKey = frame.readInt16BE(0);
    const apiVersion = frame.readInt16BE(2);
    const api = API_TABLE[apiKey];
    if (api === undefined) return null;
    const r = new Reader(frame);
    // ApiVersions requests above what we know still get an answer (in v0), as Kafka does.
    const headerVersion = api.requestHeaderVersion(Math.min(apiVersion, api.maxVersion));
    const header = decodeRequestHeader(r, headerVersion);
    this.frames.push({ apiKey, apiVersion, correlationId: header.correlationId, clientId: header.clientId, frame });
    const w = new Writer();
    const size = w.reserve(4);
    w.int32(header.correlationId);
    const v = this.options.versions ?? {};
    switch (apiKey) {
      case ApiKey.ApiVersions: {
        const [min, max] = v.apiVersions ?? [0, 4];
        const ok = apiVersion >= min && apiVersion <= max;
        const replyVersion = ok ? apiVersion : 0;
        if (ok) decodeApiVersionsRequest(r, apiVersion);
        encodeApiVersionsResponse(
          w,
          {
            errorCode: ok ? 0 : 35,
            // librdkafka < 2.11.1 infers features from this list: magic-2 batches need Produce ≥ 3
            // and Fetch ≥ 4, gzip/snappy need Produce v0 (KAFKA-18659), lz4 needs FindCoordinator.
            // So those are listed although only Produce ≥ 3 is ever answered here.
            apiKeys: [
              { apiKey: ApiKey.Produce, minVersion: (v.produce ?? [0, 11])[0], maxVersion: (v.produce ?? [0, 11])[1] },
              { apiKey: ApiKey.Fetch, minVersion: (v.fetch ?? [4, 12])[0], maxVersion: (v.fetch ?? [4, 12])[1] },
              { apiKey: ApiKey.FindCoordinator, minVersion: 0, maxVersion: 4 },
              { apiKey: ApiKey.ListOffsets, minVersion: 1, maxVersion: 5 },
              { apiKey: ApiKey.Metadata, minVersion: (v.metadata ?? [0, 12])[0], maxVersion: (v.metadata ?? [0, 12])[1] },
              { apiKey: ApiKey.ApiVersions, minVersion: min, maxVersion: max },
            ],
          },
          replyVersion,
        );
        break;
      }
      case ApiKey.Metadata: {
        if (api.responseHeaderVersion(apiVersion) === 1) w.uvarint(0);
        const req = decodeMetadataRequest(r, apiVersion);
        const names = req.topics === null || req.topics.length === 0 ? this.options.topics : req.topics.map((t) => t.name ?? '');
        encodeMetadataResponse(
          w,
          {
            brokers: [{ nodeId: 1, host: '127.0.0.1', port: this.port, rack: null }],
            clusterId: CLUSTER_ID,
            controllerId: 1,
            topics: names.map((name) => ({
              errorCode: 0,
              name,
              topicId: TOPIC_ID,
              isInternal: false,
              partitions: Array.from({ length: this.options.partitions }, (_, p) => ({
                errorCode: 0,
                partitionIndex: p,
                leaderId: 1,
                // -1: no leader epoch, so clients skip OffsetForLeaderEpoch validation.
                leaderEpoch: -1,
                replicaNodes: [1],
                isrNodes: [1],
                offlineReplicas: [],
              })),
            })),
          },
          apiVersion,
        );
        break;
      }
      case ApiKey.Produce: {
        if (api.responseHeaderVersion(apiVersion) === 1) w.uvarint(0);
        const req = decodeProduceRequest(r, apiVersion);
        if (req.acks === 0) return Buffer.alloc(0);
        encodeProduceResponse(
          w,
          {
            responses: req.topicData.map((t) => ({
              name: t.name,
              partitionResponses: t.partitionData.map((p) => {
                const key = `${t.name}/${p.index}`;
                const base = this.nextOffset.get(key) ?? 0;
                const count = p.records !== null && p.records.length >= 61 ? p.records.readInt32BE(57) : 0;
                this.nextOffset.set(key, base + count);
                return { index: p.index, errorCode: 0, baseOffset: BigInt(base), logAppendTimeMs: -1n, logStartOffset: 0n };
              }),
            })),
          },
          apiVersion,
        );
        break;
      }
      case ApiKey.ListOffsets: {
        if (this.options.serve === undefined) return null;
        if (api.responseHeaderVersion(apiVersion) === 1) w.uvarint(0);
        const req = decodeListOffsetsRequest(r, apiVersion);
        const end = this.servedEnd();
        encodeListOffsetsResponse(
          w,
          {
            topics: req.topics.map((t) => ({
              name: t.name,
              partitions: t.partitions.map((p) => ({
                partitionIndex: p.partitionIndex,
                errorCode: 0,
                timestamp: -1n,
                offset: p.timestamp === -2n || p.partitionIndex !== 0 ? 0n : BigInt(end),
                leaderEpoch: -1,
              })),
            })),
          },
          apiVersion,
        );
        break;
      }
      case ApiKey.Fetch: {
        if (this.options.serve === undefined) return null;
        if (api.responseHeaderVersion(apiVersion) === 1) w.uvarint(0);
        const req = decodeFetchRequest(r, apiVersion);
        const end = this.servedEnd();
        encodeFetchResponse(
          w,
          {
            responses: req.topics.map((t) => ({
              topic: t.topic,
              topicId: t.topicId,
              partitions: t.partitions.map((p) => {
                const hw = p.partition === 0 ? end : 0;
                return {
                  partitionIndex: p.partition,
                  errorCode: 0,
                  highWatermark: BigInt(hw),
                  lastStableOffset: BigInt(hw),
                  logStartOffset: 0n,
                  abortedTransactions: [],
                  preferredReadReplica: -1,
                  records: p.partition === 0 ? this.servedFrom(Number(p.fetchOffset)) : Buffer.alloc(0),
                };
              }),
            })),
          },
          apiVersion,
        );
        break;
      }
      default:
        return null;
    }
    const out = w.toBuffer();
    out.writeInt32BE(out.length - 4, 0);
    void size;
    return out;
  }
}
