/**
 * Kafka's RequestMetrics time split per API (RequestChannel.Request.updateRequestMetrics), under
 * the names the JMX exporter gives them (`kafka.network:type=RequestMetrics,name=TotalTimeMs,
 * request=Produce` → `kafka_network_requestmetrics_totaltimems{request="Produce"}`), as Prometheus
 * histograms in milliseconds, from the `fjord:request-times` channel the connection publishes on:
 *
 * - total: the frame was complete → the socket took the last byte of the response;
 * - request queue: frame complete → handler start. Fjord has no request queue between threads;
 *   this is the wait behind the frames that arrived in the same read, and their decoding;
 * - local: handler start → the handler says it waits remotely (or its response is ready);
 * - remote: waiting in purgatory: a long-poll Fetch waiting for data, an acks=all Produce waiting
 *   for durability (0 for requests that never wait);
 * - response queue: response ready → its turn to be written (responses leave in request order, so
 *   this is the wait behind an earlier, slower request on the same connection);
 * - response send: handed to the socket → the socket took the last byte.
 *
 * The request counter (`kafka_network_requestmetrics_requests_total{request,version}`, Kafka's
 * RequestsPerSec) is counted here too, so its count always equals the histograms'. As Kafka's
 * RequestChannel does, a Fetch is also counted as `FetchConsumer` or `FetchFollower` (a replica
 * id ≥ 0), the names dashboards graph fetch latency by.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { API_TABLE, ApiKey } from '../protocol/generated/api-table.js';
import type { FetchRequest } from '../protocol/generated/messages/fetch-request.js';
import { CHANNEL, subscribe, type RequestTimesMessage } from './channels.js';

/** Milliseconds; spans a cached read to a long poll. */
const TIME_BUCKETS_MS = [0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

/** The series of one API, so the per-request path does no label hashing. */
interface ApiChildren {
  readonly total: Histogram.Internal<string>;
  readonly requestQueue: Histogram.Internal<string>;
  readonly local: Histogram.Internal<string>;
  readonly remote: Histogram.Internal<string>;
  readonly responseQueue: Histogram.Internal<string>;
  readonly responseSend: Histogram.Internal<string>;
  readonly byVersion: Map<number, Counter.Internal>;
}

export class RequestTimeMetrics {
  private readonly requests: Counter<'request' | 'version'>;
  private readonly hist: Record<'total' | 'requestQueue' | 'local' | 'remote' | 'responseQueue' | 'responseSend', Histogram<'request'>>;
  private readonly apis = new Map<string, ApiChildren>();
  private readonly unsubscribe: () => void;

  constructor(register: Registry) {
    this.requests = new Counter({
      name: 'kafka_network_requestmetrics_requests_total',
      help: 'Requests answered, per API and version (Kafka RequestMetrics RequestsPerSec).',
      labelNames: ['request', 'version'],
      registers: [register],
    });
    const histogram = (name: string, help: string): Histogram<'request'> =>
      new Histogram({ name: `kafka_network_requestmetrics_${name}`, help, labelNames: ['request'], buckets: TIME_BUCKETS_MS, registers: [register] });
    this.hist = {
      total: histogram('totaltimems', 'Milliseconds from the complete request frame to the last response byte taken by the socket, per API (Kafka TotalTimeMs).'),
      requestQueue: histogram('requestqueuetimems', 'Milliseconds from the complete request frame to its handler starting, per API (Kafka RequestQueueTimeMs).'),
      local: histogram('localtimems', 'Milliseconds the handler worked before waiting remotely or answering, per API (Kafka LocalTimeMs).'),
      remote: histogram('remotetimems', 'Milliseconds waiting in purgatory: long-poll fetches, acks=all produces, per API (Kafka RemoteTimeMs).'),
      responseQueue: histogram('responsequeuetimems', 'Milliseconds a ready response waited behind earlier responses of its connection, per API (Kafka ResponseQueueTimeMs).'),
      responseSend: histogram('responsesendtimems', 'Milliseconds from writing the response to the socket taking its last byte, per API (Kafka ResponseSendTimeMs).'),
    };
    this.unsubscribe = subscribe<RequestTimesMessage>(CHANNEL.requestTimes, (m) => this.record(m));
  }

  private children(name: string): ApiChildren {
    let c = this.apis.get(name);
    if (c === undefined) {
      const h = this.hist;
      c = {
        total: h.total.labels(name),
        requestQueue: h.requestQueue.labels(name),
        local: h.local.labels(name),
        remote: h.remote.labels(name),
        responseQueue: h.responseQueue.labels(name),
        responseSend: h.responseSend.labels(name),
        byVersion: new Map(),
      };
      this.apis.set(name, c);
    }
    return c;
  }

  private record(m: RequestTimesMessage): void {
    this.observe(API_TABLE[m.apiKey]?.name ?? String(m.apiKey), m);
    if (m.apiKey === ApiKey.Fetch) {
      const f = m.request as FetchRequest;
      this.observe(f.replicaId >= 0 || f.replicaState.replicaId >= 0 ? 'FetchFollower' : 'FetchConsumer', m);
    }
  }

  private observe(name: string, m: RequestTimesMessage): void {
    const c = this.children(name);
    let count = c.byVersion.get(m.apiVersion);
    if (count === undefined) c.byVersion.set(m.apiVersion, (count = this.requests.labels(name, String(m.apiVersion))));
    count.inc();
    // As RequestChannel: without a remote wait, local work ends when the response is complete.
    const localEnd = m.remoteAt < 0 ? m.completeAt : m.remoteAt;
    c.total.observe(span(m.receivedAt, m.sentAt));
    c.requestQueue.observe(span(m.receivedAt, m.handlerStartAt));
    c.local.observe(span(m.handlerStartAt, localEnd));
    c.remote.observe(span(localEnd, m.completeAt));
    c.responseQueue.observe(span(m.completeAt, m.dequeuedAt));
    c.responseSend.observe(span(m.dequeuedAt, m.sentAt));
  }

  close(): void {
    this.unsubscribe();
  }
}

/** Never negative, as Kafka's nanosToMs. */
function span(from: number, to: number): number {
  return Math.max(0, to - from);
}
