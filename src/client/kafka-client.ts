/**
 * The one Kafka client of the project: bootstrap, the cluster's broker list (from Metadata,
 * DescribeCluster and Fetch's NodeEndpoints), one connection per broker created on first use and
 * re-created after a failure, and typed calls on the generated request and response types.
 *
 * The mirror fetcher (through its `SourceEndpoint` adapter), the mirror metadata sync, the admin
 * library and the CLIs all use it. It works against any Kafka cluster with standard APIs (Kafka
 * 3.1+ for Fetch with topic ids) and against Fjord.
 *
 * Concurrency contract: single event loop; calls may overlap freely (each connection pipelines).
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { MetadataResponse } from '../protocol/generated/messages/metadata-response.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { Apis, type ApiSpec } from './apis.js';
import { parseHostPort, type KafkaClientOptions } from './client-options.js';
import { KafkaConnection, type HeldResponse, type KafkaConnectionOptions } from './kafka-connection.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

interface KnownBroker {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

/** DescribeCluster's answer, or the same facts from Metadata for brokers without DescribeCluster. */
interface ClusterDescription {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly clusterId: string;
  readonly controllerId: number;
  readonly brokers: readonly KnownBroker[];
}

export class KafkaClient {
  private readonly brokers = new Map<number, KnownBroker>();
  /** By broker and lane ("3", "3/1"): lane 0 is the shared connection, others are a caller's own. */
  private readonly connections = new Map<string, Promise<KafkaConnection>>();
  private bootstrapConn: Promise<KafkaConnection> | null = null;
  private closed = false;
  /** The cluster id from the last Metadata or DescribeCluster answer. */
  clusterId: string | null = null;

  constructor(readonly opts: KafkaClientOptions) {
    if (opts.bootstrapServers.length === 0) throw new KafkaError(ErrorCode.INVALID_CONFIG, 'bootstrap.servers is empty');
  }

  /**
   * One call. `broker` null sends it to any reachable broker. Rejects with UNSUPPORTED_VERSION
   * when the broker speaks no version in the call's range. `lane` > 0 sends it on a connection
   * of its own to that broker: a broker answers one connection's requests in order, so a caller
   * that long-polls (each mirror fetch loop, like each of Kafka's fetcher threads) must not queue
   * behind another's.
   */
  async send<Req, Res>(api: ApiSpec<Req, Res>, req: Req, broker: number | null = null, lane = 0): Promise<Res> {
    const res = await this.sendIfSupported(api, req, broker, lane);
    if (res === null) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `the broker does not support API ${api.apiKey} v${api.versions[0]}-${api.versions[1]}`);
    return res;
  }

  /** Like `send`, but resolves null when the broker speaks no version in the call's range. */
  async sendIfSupported<Req, Res>(api: ApiSpec<Req, Res>, req: Req, broker: number | null = null, lane = 0): Promise<Res | null> {
    const conn = broker === null ? await this.anyConnection() : await this.connectionTo(broker, lane);
    const v = conn.pickVersion(api.apiKey, api.versions);
    if (v < 0) return null;
    return conn.request(api.apiKey, v, (w) => api.encode(w, req, v), (r) => api.decode(r, v));
  }

  /**
   * Like `send`, with the response's frame held until the caller releases it, so its buffer can
   * be read into again (KafkaConnection.requestHoldingFrame): for Fetch answers whose records are
   * appended after the call returns.
   */
  async sendHoldingFrame<Req, Res>(api: ApiSpec<Req, Res>, req: Req, broker: number | null = null, lane = 0): Promise<HeldResponse<Res>> {
    const conn = broker === null ? await this.anyConnection() : await this.connectionTo(broker, lane);
    const v = conn.pickVersion(api.apiKey, api.versions);
    if (v < 0) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `the broker does not support API ${api.apiKey} v${api.versions[0]}-${api.versions[1]}`);
    return conn.requestHoldingFrame(api.apiKey, v, (w) => api.encode(w, req, v), (r) => api.decode(r, v));
  }

  /** Metadata for the named topics (null = all topics), from any reachable broker; refreshes the broker list. */
  async metadata(topics: readonly string[] | null): Promise<MetadataResponse> {
    const res = await this.send(Apis.Metadata, {
      topics: topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name })),
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    this.learnBrokers(res.brokers);
    this.clusterId = res.clusterId;
    return res;
  }

  async describeCluster(): Promise<ClusterDescription> {
    const res = await this.sendIfSupported(Apis.DescribeCluster, { includeClusterAuthorizedOperations: false });
    if (res === null) {
      // Brokers before DescribeCluster (KIP-700): the Metadata response carries the cluster id too.
      const md = await this.metadata([]);
      return { errorCode: ErrorCode.NONE, errorMessage: null, clusterId: md.clusterId ?? '', controllerId: md.controllerId, brokers: md.brokers };
    }
    const brokers = res.brokers.map((b) => ({ nodeId: b.brokerId, host: b.host, port: b.port }));
    if (res.errorCode === ErrorCode.NONE) {
      this.learnBrokers(brokers);
      this.clusterId = res.clusterId;
    }
    return { errorCode: res.errorCode, errorMessage: res.errorMessage, clusterId: res.clusterId, controllerId: res.controllerId, brokers };
  }

  /** Brokers named by a response (Fetch v16 NodeEndpoints, KIP-951) join the broker list. */
  learnBrokers(list: readonly KnownBroker[]): void {
    for (const b of list) {
      const old = this.brokers.get(b.nodeId);
      if (old !== undefined && (old.host !== b.host || old.port !== b.port)) {
        // The broker moved: drop the connection so the next request reconnects to the new address.
        for (const [key, conn] of this.connections) {
          if (key !== String(b.nodeId) && !key.startsWith(`${b.nodeId}/`)) continue;
          conn.then((c) => c.close()).catch(() => undefined);
          this.connections.delete(key);
        }
      }
      this.brokers.set(b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port });
    }
  }

  knownBrokers(): KnownBroker[] {
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

  /**
   * A live connection to any broker. Callers that find the bootstrap connection gone at the same
   * time share the one new connection the first of them opens, and nothing is opened once the
   * client is closed: a connection `close` does not know of would stay open and keep the
   * process alive.
   */
  private async anyConnection(): Promise<KafkaConnection> {
    for (;;) {
      if (this.closed) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'client closed');
      for (const p of [...this.connections.values()]) {
        const c = await p.catch(() => null);
        if (this.closed) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'client closed');
        if (c !== null && !c.isClosed) return c;
      }
      const boot = this.bootstrapConn;
      if (boot !== null) {
        const c = await boot.catch(() => null);
        if (this.closed) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'client closed');
        if (c !== null && !c.isClosed) return c;
        // Another caller replaced the dead connection while this one waited: use that one.
        if (this.bootstrapConn !== boot) continue;
      }
      const next = this.connectBootstrap();
      this.bootstrapConn = next;
      return next;
    }
  }

  private async connectBootstrap(): Promise<KafkaConnection> {
    const errors: string[] = [];
    for (const addr of this.opts.bootstrapServers) {
      let address;
      try {
        address = parseHostPort(addr);
      } catch (err) {
        errors.push((err as Error).message);
        continue;
      }
      try {
        return await KafkaConnection.connect(this.connectionOptions(address.host, address.port));
      } catch (err) {
        // A non-retriable failure (an authentication failure, say) is the answer, not a reason to
        // try the next address: Kafka's client surfaces AuthenticationException the same way.
        if (err instanceof KafkaError && !err.retriable) throw err;
        errors.push((err as Error).message);
      }
    }
    throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, `no broker reachable: ${errors.join('; ')}`);
  }

  private connectionTo(brokerId: number, lane = 0): Promise<KafkaConnection> {
    if (this.closed) return Promise.reject(new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'client closed'));
    const key = lane === 0 ? String(brokerId) : `${brokerId}/${lane}`;
    const existing = this.connections.get(key);
    if (existing !== undefined) {
      return existing.then((c) => {
        if (!c.isClosed) return c;
        if (this.connections.get(key) === existing) this.connections.delete(key);
        return this.connectionTo(brokerId, lane);
      });
    }
    const b = this.brokers.get(brokerId);
    if (b === undefined) return Promise.reject(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `broker ${brokerId} unknown; refresh metadata`));
    const p = KafkaConnection.connect(this.connectionOptions(b.host, b.port));
    this.connections.set(key, p);
    const forget = (): void => {
      if (this.connections.get(key) === p) this.connections.delete(key);
    };
    p.then((c) => c.onClose(forget), forget);
    return p;
  }

  private connectionOptions(host: string, port: number): KafkaConnectionOptions {
    const o = this.opts;
    return {
      host,
      port,
      clientId: o.clientId ?? 'fjord',
      ...(o.requestTimeoutMs !== undefined ? { requestTimeoutMs: o.requestTimeoutMs } : {}),
      ...(o.connectTimeoutMs !== undefined ? { connectTimeoutMs: o.connectTimeoutMs } : {}),
      ...(o.socketFactory !== undefined ? { socketFactory: o.socketFactory } : {}),
      ...(o.authenticate !== undefined ? { authenticate: o.authenticate } : {}),
    };
  }
}
