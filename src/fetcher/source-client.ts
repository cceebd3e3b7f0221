/**
 * A small Kafka client for the source cluster: bootstrap, metadata, one connection per source
 * broker (created on first use, re-created after a failure), and the calls the mirror needs.
 * It implements `SourceEndpoint`, the seam the mirror fetcher talks to.
 *
 * Works against any Kafka cluster with standard APIs (Kafka 3.1+ for Fetch with topic ids).
 */
import { readFileSync } from 'node:fs';
import type tls from 'node:tls';
import {
  API,
  decodeDescribeClusterResponse,
  decodeFetchResponse,
  decodeListOffsetsResponse,
  decodeMetadataResponse,
  decodeOffsetForLeaderEpochResponse,
  encodeDescribeClusterRequest,
  encodeFetchRequest,
  encodeListOffsetsRequest,
  encodeMetadataRequest,
  encodeOffsetForLeaderEpochRequest,
  type DescribeClusterResult,
  type EpochEndOffset,
  type EpochRequest,
  type FetchRequest,
  type FetchResponse,
  type ListOffsetsPartitionRequest,
  type ListOffsetsPartitionResult,
  type MetadataBroker,
  type MetadataResult,
} from './source-protocol.js';
import { SourceConnection, SourceConnectionError } from './source-connection.js';
import type { SourceEndpoint } from './source-endpoint.js';

export interface SourceClientOptions {
  /** host:port list (bootstrap.servers). */
  readonly bootstrapServers: readonly string[];
  readonly clientId?: string;
  readonly requestTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
  readonly tls?: tls.ConnectionOptions | null;
}

/** Builds client options from a mirror's CLUSTER_MIRROR configs (Kafka client keys). */
export function sourceClientOptionsFromConfig(mirrorName: string, cfg: ReadonlyMap<string, string>): SourceClientOptions {
  const bootstrap = cfg.get('bootstrap.servers');
  if (bootstrap === undefined || bootstrap.trim() === '') throw new Error('bootstrap.servers is required');
  const protocol = (cfg.get('security.protocol') ?? 'PLAINTEXT').toUpperCase();
  if (protocol !== 'PLAINTEXT' && protocol !== 'SSL') {
    throw new Error(`security.protocol ${protocol} is not supported by the mirror client (PLAINTEXT, SSL)`);
  }
  let tlsOpts: tls.ConnectionOptions | null = null;
  if (protocol === 'SSL') {
    tlsOpts = {};
    const ca = cfg.get('ssl.truststore.certificates') ?? readPem(cfg.get('ssl.truststore.location'));
    if (ca !== undefined) tlsOpts.ca = ca;
    const cert = cfg.get('ssl.keystore.certificate.chain');
    const key = cfg.get('ssl.keystore.key');
    if (cert !== undefined) tlsOpts.cert = cert;
    if (key !== undefined) tlsOpts.key = key;
    if (cfg.get('ssl.endpoint.identification.algorithm') === '') tlsOpts.checkServerIdentity = () => undefined;
  }
  const num = (k: string): number | undefined => {
    const v = cfg.get(k);
    return v === undefined ? undefined : Number(v);
  };
  const out: { -readonly [K in keyof SourceClientOptions]: SourceClientOptions[K] } = {
    bootstrapServers: bootstrap.split(',').map((s) => s.trim()).filter((s) => s !== ''),
    clientId: cfg.get('client.id') ?? `fjord-mirror-${mirrorName}`,
    tls: tlsOpts,
  };
  const rt = num('request.timeout.ms');
  if (rt !== undefined) out.requestTimeoutMs = rt;
  const ct = num('socket.connection.setup.timeout.ms');
  if (ct !== undefined) out.connectTimeoutMs = ct;
  return out;
}

function readPem(path: string | undefined): string | undefined {
  return path === undefined ? undefined : readFileSync(path, 'utf8');
}

export function parseHostPort(s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  if (i <= 0) throw new Error(`bad address '${s}' (host:port expected)`);
  const host = s.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(s.slice(i + 1));
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`bad port in '${s}'`);
  return { host, port };
}

export class SourceClient implements SourceEndpoint {
  private readonly brokers = new Map<number, MetadataBroker>();
  private readonly connections = new Map<number, Promise<SourceConnection>>();
  private bootstrapConn: Promise<SourceConnection> | null = null;
  private closed = false;
  clusterId: string | null = null;

  constructor(readonly opts: SourceClientOptions) {
    if (opts.bootstrapServers.length === 0) throw new Error('bootstrap.servers is empty');
  }

  /** Metadata for the named topics (null = all), from any reachable broker; refreshes the broker list. */
  async metadata(topics: readonly string[] | null): Promise<MetadataResult> {
    const conn = await this.anyConnection();
    const v = conn.pickVersion(API.METADATA);
    if (v < 0) throw new SourceConnectionError(`${conn.address}: source does not support Metadata v12`);
    const res = await conn.request(API.METADATA, v, (w) => encodeMetadataRequest(w, topics), decodeMetadataResponse);
    this.learnBrokers(res.brokers);
    this.clusterId = res.clusterId;
    return res;
  }

  async fetch(brokerId: number, req: FetchRequest): Promise<FetchResponse> {
    const conn = await this.connectionTo(brokerId);
    const v = conn.pickVersion(API.FETCH);
    if (v < 0) throw new SourceConnectionError(`${conn.address}: source does not support Fetch v13+ (topic ids)`);
    const res = await conn.request(API.FETCH, v, (w) => encodeFetchRequest(w, req, v), (r) => decodeFetchResponse(r, v));
    this.learnBrokers(res.nodeEndpoints);
    return res;
  }

  async listOffsets(brokerId: number, parts: readonly ListOffsetsPartitionRequest[]): Promise<ListOffsetsPartitionResult[]> {
    const conn = await this.connectionTo(brokerId);
    const v = conn.pickVersion(API.LIST_OFFSETS);
    if (v < 0) throw new SourceConnectionError(`${conn.address}: source does not support ListOffsets v7`);
    return conn.request(API.LIST_OFFSETS, v, (w) => encodeListOffsetsRequest(w, parts), decodeListOffsetsResponse);
  }

  async offsetsForLeaderEpoch(brokerId: number, parts: readonly EpochRequest[]): Promise<EpochEndOffset[]> {
    const conn = await this.connectionTo(brokerId);
    const v = conn.pickVersion(API.OFFSET_FOR_LEADER_EPOCH);
    if (v < 0) throw new SourceConnectionError(`${conn.address}: source does not support OffsetForLeaderEpoch v4`);
    return conn.request(API.OFFSET_FOR_LEADER_EPOCH, v, (w) => encodeOffsetForLeaderEpochRequest(w, parts), decodeOffsetForLeaderEpochResponse);
  }

  async describeCluster(): Promise<DescribeClusterResult> {
    const conn = await this.anyConnection();
    if (conn.pickVersion(API.DESCRIBE_CLUSTER) < 0) {
      // Older sources: the Metadata response carries the cluster id too.
      const md = await this.metadata([]);
      return { errorCode: 0, errorMessage: null, clusterId: md.clusterId ?? '', controllerId: md.controllerId, brokers: md.brokers };
    }
    const res = await conn.request(API.DESCRIBE_CLUSTER, 0, encodeDescribeClusterRequest, decodeDescribeClusterResponse);
    if (res.errorCode === 0) {
      this.learnBrokers(res.brokers);
      this.clusterId = res.clusterId;
    }
    return res;
  }

  /**
   * A raw request to any broker (admin calls with their own codecs: ListClusterMirrors,
   * DescribeClusterMirrors). Returns null when no version in `range` is supported.
   */
  async rawRequest<T>(
    brokerId: number | null,
    apiKey: number,
    range: readonly [number, number],
    encode: (w: import('../protocol/writer.js').Writer, version: number) => void,
    decode: (r: import('../protocol/reader.js').Reader, version: number) => T,
  ): Promise<T | null> {
    const conn = brokerId === null ? await this.anyConnection() : await this.connectionTo(brokerId);
    const v = conn.pickVersion(apiKey, range);
    if (v < 0) return null;
    return conn.request(apiKey, v, (w) => encode(w, v), (r) => decode(r, v));
  }

  knownBrokers(): MetadataBroker[] {
    return [...this.brokers.values()];
  }

  close(): void {
    this.closed = true;
    for (const c of [this.bootstrapConn, ...this.connections.values()]) {
      c?.then((conn) => conn.close()).catch(() => undefined);
    }
    this.connections.clear();
    this.bootstrapConn = null;
  }

  private learnBrokers(list: readonly MetadataBroker[]): void {
    for (const b of list) {
      const old = this.brokers.get(b.nodeId);
      if (old !== undefined && (old.host !== b.host || old.port !== b.port)) {
        // The broker moved: drop the connection so the next request reconnects to the new address.
        this.connections.get(b.nodeId)?.then((c) => c.close()).catch(() => undefined);
        this.connections.delete(b.nodeId);
      }
      this.brokers.set(b.nodeId, b);
    }
  }

  private async anyConnection(): Promise<SourceConnection> {
    if (this.closed) throw new SourceConnectionError('source client closed');
    for (const p of this.connections.values()) {
      const c = await p.catch(() => null);
      if (c !== null && !c.isClosed) return c;
    }
    if (this.bootstrapConn !== null) {
      const c = await this.bootstrapConn.catch(() => null);
      if (c !== null && !c.isClosed) return c;
    }
    this.bootstrapConn = this.connectBootstrap();
    return this.bootstrapConn;
  }

  private async connectBootstrap(): Promise<SourceConnection> {
    const errors: string[] = [];
    for (const addr of this.opts.bootstrapServers) {
      try {
        const { host, port } = parseHostPort(addr);
        return await SourceConnection.connect(this.connOpts(host, port));
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    throw new SourceConnectionError(`no source broker reachable: ${errors.join('; ')}`);
  }

  private connectionTo(brokerId: number): Promise<SourceConnection> {
    if (this.closed) return Promise.reject(new SourceConnectionError('source client closed'));
    const existing = this.connections.get(brokerId);
    if (existing !== undefined) {
      return existing.then((c) => {
        if (!c.isClosed) return c;
        this.connections.delete(brokerId);
        return this.connectionTo(brokerId);
      });
    }
    const b = this.brokers.get(brokerId);
    if (b === undefined) return Promise.reject(new SourceConnectionError(`source broker ${brokerId} unknown; refresh metadata`));
    const p = SourceConnection.connect(this.connOpts(b.host, b.port));
    this.connections.set(brokerId, p);
    p.then(
      (c) => c.onClose(() => {
        if (this.connections.get(brokerId) === p) this.connections.delete(brokerId);
      }),
      () => {
        if (this.connections.get(brokerId) === p) this.connections.delete(brokerId);
      },
    );
    return p;
  }

  private connOpts(host: string, port: number): import('./source-connection.js').SourceConnectionOptions {
    return {
      host,
      port,
      clientId: this.opts.clientId ?? 'fjord-mirror',
      ...(this.opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: this.opts.requestTimeoutMs } : {}),
      ...(this.opts.connectTimeoutMs !== undefined ? { connectTimeoutMs: this.opts.connectTimeoutMs } : {}),
      tls: this.opts.tls ?? null,
    };
  }
}
