/**
 * Per-request metrics, taken by wrapping the node's API handlers (the handler contract of
 * src/server/api-handler.ts), so no handler carries metrics code:
 *
 * - Kafka's `RequestMetrics` (requests per API and version, the time split per API): from the
 *   connection's timestamps, in request-times.ts.
 * - Kafka's `BrokerTopicMetrics` per topic: bytes and messages in (successful produce appends,
 *   as ReplicaManager.appendRecords counts them), bytes rejected, bytes out (consumer fetches;
 *   follower fetches count as replication bytes out), total and failed produce/fetch requests
 *   per partition. Message counts come from the batch headers (batch-headers.ts).
 * - Slow requests (`fjord.slow.request.ms`): logged with the API, version, client id and partition
 *   count. A Fetch counts only the time beyond its own MaxWaitMs, so an idle long poll is not slow.
 */
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../common/logger.js';
import type { MetadataImage } from '../controller/metadata-image.js';
import { API_TABLE, ApiKey } from '../protocol/generated/api-table.js';
import type { FetchRequest } from '../protocol/generated/messages/fetch-request.js';
import type { FetchResponseInput } from '../protocol/generated/messages/fetch-response.js';
import type { ProduceRequest } from '../protocol/generated/messages/produce-request.js';
import type { ProduceResponseInput } from '../protocol/generated/messages/produce-response.js';
import type { ApiHandler, RequestContext } from '../server/api-handler.js';
import { countRecords } from './batch-headers.js';
import { RequestTimeMetrics } from './request-times.js';

type TopicCounter = Counter<'topic'>;

interface TopicChildren {
  readonly bytesIn: Counter.Internal;
  readonly messagesIn: Counter.Internal;
  readonly bytesRejected: Counter.Internal;
  readonly bytesOut: Counter.Internal;
  readonly replicationBytesOut: Counter.Internal;
  readonly totalProduce: Counter.Internal;
  readonly failedProduce: Counter.Internal;
  readonly totalFetch: Counter.Internal;
  readonly failedFetch: Counter.Internal;
}

function topicCounter(register: Registry, name: string, help: string): TopicCounter {
  return new Counter({ name: `kafka_server_brokertopicmetrics_${name}_total`, help, labelNames: ['topic'], registers: [register] });
}

interface RequestMetricsOptions {
  readonly register: Registry;
  readonly image: MetadataImage;
  readonly log: Logger;
  /** `fjord.slow.request.ms`; negative turns slow request logging off. */
  readonly slowRequestMs: number;
}

export class RequestMetrics {
  private readonly times: RequestTimeMetrics;
  private readonly bytesIn: TopicCounter;
  private readonly messagesIn: TopicCounter;
  private readonly bytesRejected: TopicCounter;
  private readonly bytesOut: TopicCounter;
  private readonly replicationBytesOut: TopicCounter;
  private readonly totalProduce: TopicCounter;
  private readonly failedProduce: TopicCounter;
  private readonly totalFetch: TopicCounter;
  private readonly failedFetch: TopicCounter;

  constructor(private readonly opts: RequestMetricsOptions) {
    const register = opts.register;
    this.times = new RequestTimeMetrics(register);
    this.bytesIn = topicCounter(register, 'bytesin', 'Record-batch bytes appended by produce requests, per topic.');
    this.messagesIn = topicCounter(register, 'messagesin', 'Records appended by produce requests, per topic.');
    this.bytesRejected = topicCounter(register, 'bytesrejected', 'Record-batch bytes of produce partitions that failed, per topic.');
    this.bytesOut = topicCounter(register, 'bytesout', 'Record-batch bytes returned to consumer fetches, per topic.');
    this.replicationBytesOut = topicCounter(register, 'replicationbytesout', 'Record-batch bytes returned to follower fetches, per topic.');
    this.totalProduce = topicCounter(register, 'totalproducerequests', 'Produce requests per topic partition.');
    this.failedProduce = topicCounter(register, 'failedproducerequests', 'Produce requests per topic partition that failed with an error code.');
    this.totalFetch = topicCounter(register, 'totalfetchrequests', 'Fetch requests per topic partition.');
    this.failedFetch = topicCounter(register, 'failedfetchrequests', 'Fetch requests per topic partition that failed with an error code.');
  }

  /** A copy of `handlers` with every handler measured; the originals are untouched. */
  instrument(handlers: ReadonlyMap<number, ApiHandler>): Map<number, ApiHandler> {
    const out = new Map<number, ApiHandler>();
    for (const [key, h] of handlers) out.set(key, this.wrap(h));
    return out;
  }

  private wrap(h: ApiHandler): ApiHandler {
    const name = API_TABLE[h.apiKey]?.name ?? String(h.apiKey);
    return {
      apiKey: h.apiKey,
      minVersion: h.minVersion,
      maxVersion: h.maxVersion,
      decode: (r, v) => h.decode(r, v),
      encode: (w, res, v) => h.encode(w, res, v),
      handle: (ctx, req) => {
        const started = performance.now();
        const done = (res: unknown, failed: boolean): void => {
          const ms = performance.now() - started;
          if (h.apiKey === ApiKey.Produce) this.onProduce(req as ProduceRequest, res as ProduceResponseInput | null, failed);
          else if (h.apiKey === ApiKey.Fetch && !failed) this.onFetch(req as FetchRequest, res as FetchResponseInput | null);
          this.maybeLogSlow(name, ctx, req, ms);
        };
        let result: unknown;
        try {
          result = h.handle(ctx, req);
        } catch (err) {
          done(null, true);
          throw err;
        }
        if (result instanceof Promise) {
          return result.then(
            (res: unknown) => {
              done(res, false);
              return res;
            },
            (err: unknown) => {
              done(null, true);
              throw err;
            },
          );
        }
        done(result, false);
        return result;
      },
    };
  }

  /** Label children per topic, so the hot path does no label hashing. */
  private readonly topics = new Map<string, TopicChildren>();

  private topic(name: string, topicId: string): TopicChildren | undefined {
    // Only topics that exist get a label: a client naming random topics must not grow the series.
    const t = name !== '' ? this.opts.image.topic(name) : this.opts.image.topicsById.get(topicId);
    if (t === undefined) return undefined;
    let c = this.topics.get(t.name);
    if (c === undefined) {
      const l = (counter: TopicCounter): Counter.Internal => counter.labels(t.name);
      c = {
        bytesIn: l(this.bytesIn),
        messagesIn: l(this.messagesIn),
        bytesRejected: l(this.bytesRejected),
        bytesOut: l(this.bytesOut),
        replicationBytesOut: l(this.replicationBytesOut),
        totalProduce: l(this.totalProduce),
        failedProduce: l(this.failedProduce),
        totalFetch: l(this.totalFetch),
        failedFetch: l(this.failedFetch),
      };
      this.topics.set(t.name, c);
    }
    return c;
  }

  close(): void {
    this.times.close();
  }

  /** Drops the series of deleted topics (Kafka's BrokerTopicStats.removeMetrics on deletion). */
  forgetDeletedTopics(): void {
    for (const name of this.topics.keys()) {
      if (this.opts.image.topic(name) !== undefined) continue;
      this.topics.delete(name);
      for (const c of [this.bytesIn, this.messagesIn, this.bytesRejected, this.bytesOut, this.replicationBytesOut, this.totalProduce, this.failedProduce, this.totalFetch, this.failedFetch]) c.remove(name);
    }
  }

  private onProduce(req: ProduceRequest, res: ProduceResponseInput | null, failed: boolean): void {
    req.topicData.forEach((td, ti) => {
      const c = this.topic(td.name, td.topicId);
      if (c === undefined) return;
      const parts = res?.responses?.[ti]?.partitionResponses;
      td.partitionData.forEach((pd, pi) => {
        c.totalProduce.inc();
        const bytes = pd.records?.length ?? 0;
        // acks=0 has no response: success unless the handler failed (it then closes the connection).
        const errorCode = failed ? -1 : (parts?.[pi]?.errorCode ?? 0);
        if (errorCode !== 0) {
          c.failedProduce.inc();
          c.bytesRejected.inc(bytes);
          return;
        }
        c.bytesIn.inc(bytes);
        if (pd.records) c.messagesIn.inc(countRecords(pd.records));
      });
    });
  }

  private onFetch(req: FetchRequest, res: FetchResponseInput | null): void {
    const follower = req.replicaId >= 0 || req.replicaState.replicaId >= 0;
    for (const t of res?.responses ?? []) {
      const c = this.topic(t.topic ?? '', t.topicId ?? '');
      if (c === undefined) continue;
      for (const p of t.partitions ?? []) {
        c.totalFetch.inc();
        if ((p.errorCode ?? 0) !== 0) c.failedFetch.inc();
        const bytes = p.records?.length ?? 0;
        if (bytes > 0) (follower ? c.replicationBytesOut : c.bytesOut).inc(bytes);
      }
    }
  }

  private maybeLogSlow(api: string, ctx: RequestContext, req: unknown, ms: number): void {
    const threshold = this.opts.slowRequestMs;
    if (threshold < 0) return;
    const allowance = ctx.apiKey === ApiKey.Fetch ? (req as FetchRequest).maxWaitMs : 0;
    if (ms - allowance < threshold) return;
    this.opts.log.warn('slow request', {
      api,
      apiVersion: ctx.apiVersion,
      clientId: ctx.clientId,
      client: ctx.clientAddress,
      partitions: partitionCount(req),
      ms: Math.round(ms * 10) / 10,
    });
  }
}

/** Partitions named by a request: Produce's topicData/partitionData, else any topics[].partitions[]. */
export function partitionCount(req: unknown): number {
  if (typeof req !== 'object' || req === null) return 0;
  const r = req as { topicData?: unknown; topics?: unknown };
  const list = Array.isArray(r.topicData) ? r.topicData : Array.isArray(r.topics) ? r.topics : null;
  if (list === null) return 0;
  let n = 0;
  for (const t of list as unknown[]) {
    if (typeof t !== 'object' || t === null) continue;
    const tt = t as { partitionData?: unknown; partitions?: unknown; partitionIndexes?: unknown };
    const parts = tt.partitionData ?? tt.partitions ?? tt.partitionIndexes;
    if (Array.isArray(parts)) n += parts.length;
  }
  return n;
}
