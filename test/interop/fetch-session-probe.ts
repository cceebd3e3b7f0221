/**
 * A raw Kafka-protocol client for KIP-227 fetch sessions: CreateTopics, Produce and Fetch frames
 * written by the project's codecs and sent over TCP, no client library in between, so the same
 * case can run against Apache Kafka and against Fjord and report what a fetcher would see.
 *
 * Session ids are random on both brokers, so an observation names them by order of appearance
 * ('none' for 0, then 'A', 'B', ...): two runs compare equal when they open, keep and close the
 * same sessions.
 */
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDeleteTopicsRequest } from '../../src/protocol/generated/messages/delete-topics-request.js';
import { decodeDeleteTopicsResponse } from '../../src/protocol/generated/messages/delete-topics-response.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse, type FetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { WireClient } from '../broker/wire.js';

export interface ProbeTopic {
  readonly name: string;
  readonly id: string;
}

export interface ProbePartition {
  readonly topic: ProbeTopic;
  readonly partition: number;
  readonly fetchOffset?: bigint;
}

export interface ProbeFetch {
  readonly version?: number;
  readonly sessionId: number;
  readonly epoch: number;
  readonly partitions?: readonly ProbePartition[];
  readonly forgotten?: readonly { topic: ProbeTopic; partitions: number[] }[];
  /** >= 0 makes it a follower (privileged) fetch. */
  readonly replicaId?: number;
  readonly maxBytes?: number;
  /** A long poll: wait up to this long for MinBytes 1 (default 0: answered at once). */
  readonly maxWaitMs?: number;
}

/** One partition of a response as a fetcher sees it: `topic:partition` error hw records-bytes>0. */
export type SeenPartition = string;

export interface SeenFetch {
  readonly errorCode: number;
  readonly session: string;
  readonly partitions: SeenPartition[];
}

export class SessionProbe {
  private readonly labels = new Map<number, string>();
  private readonly topicNames = new Map<string, string>();

  private constructor(readonly wire: WireClient) {}

  static async connect(port: number): Promise<SessionProbe> {
    return new SessionProbe(await WireClient.connect(port));
  }

  close(): void {
    this.wire.close();
  }

  /** The label of a session id in this probe's observations. */
  label(sessionId: number): string {
    if (sessionId === 0) return 'none';
    let l = this.labels.get(sessionId);
    if (l === undefined) {
      l = String.fromCharCode(65 + this.labels.size);
      this.labels.set(sessionId, l);
    }
    return l;
  }

  /** Creates a topic; `short` is the name observations use for it (the real one carries a run id). */
  async createTopic(name: string, partitions: number, short: string): Promise<ProbeTopic> {
    const r = await this.wire.call(19, 7, (w) =>
      encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions: partitions, replicationFactor: 1 }], timeoutMs: 30_000 }, 7),
    );
    const res = decodeCreateTopicsResponse(r, 7).topics[0]!;
    if (res.errorCode !== 0) throw new Error(`CreateTopics ${name}: error ${res.errorCode}`);
    this.topicNames.set(name, short);
    this.topicNames.set(res.topicId, short);
    const topic = { name, id: res.topicId };
    await this.ready(topic, partitions);
    return topic;
  }

  /** Waits until every partition of a new topic answers a sessionless fetch without an error. */
  private async ready(topic: ProbeTopic, partitions: number): Promise<void> {
    const parts = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    for (let i = 0; ; i++) {
      const res = await this.fetchRaw({ sessionId: 0, epoch: -1, partitions: parts });
      const errors = res.responses.flatMap((t) => t.partitions.map((p) => p.errorCode));
      if (res.errorCode === 0 && errors.length === partitions && errors.every((e) => e === 0)) return;
      if (i >= 100) throw new Error(`${topic.name} not ready for fetching: ${JSON.stringify(errors)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async deleteTopic(topic: ProbeTopic): Promise<void> {
    const r = await this.wire.call(20, 6, (w) => encodeDeleteTopicsRequest(w, { topics: [{ name: topic.name }], timeoutMs: 30_000 }, 6));
    const res = decodeDeleteTopicsResponse(r, 6).responses[0]!;
    if (res.errorCode !== 0) throw new Error(`DeleteTopics ${topic.name}: error ${res.errorCode}`);
  }

  /** Appends `count` one-record batches to a partition (acks=1). */
  async produce(topic: ProbeTopic, partition: number, count = 1): Promise<void> {
    for (let i = 0; i < count; i++) {
      const records = buildRecordBatch({ records: [{ value: Buffer.from(`v${i}`) }] });
      const r = await this.wire.call(0, 9, (w) =>
        encodeProduceRequest(w, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: topic.name, partitionData: [{ index: partition, records }] }] }, 9),
      );
      const p = decodeProduceResponse(r, 9).responses[0]!.partitionResponses[0]!;
      if (p.errorCode !== 0) throw new Error(`Produce ${topic.name}-${partition}: error ${p.errorCode}`);
    }
  }

  /** One Fetch request, decoded. */
  async fetchRaw(f: ProbeFetch): Promise<FetchResponse> {
    const v = f.version ?? 13;
    const byId = v >= 13;
    const topics: { topic: ProbeTopic; parts: ProbePartition[] }[] = [];
    for (const p of f.partitions ?? []) {
      const last = topics[topics.length - 1];
      if (last && last.topic === p.topic) last.parts.push(p);
      else topics.push({ topic: p.topic, parts: [p] });
    }
    const r = await this.wire.call(1, v, (w) =>
      encodeFetchRequest(
        w,
        {
          replicaId: f.replicaId ?? -1,
          ...(v >= 15 ? { replicaState: { replicaId: f.replicaId ?? -1, replicaEpoch: -1n } } : {}),
          maxWaitMs: f.maxWaitMs ?? 0,
          minBytes: f.maxWaitMs === undefined ? 0 : 1,
          maxBytes: f.maxBytes ?? 1 << 20,
          isolationLevel: 0,
          sessionId: f.sessionId,
          sessionEpoch: f.epoch,
          topics: topics.map((t) => ({
            ...(byId ? { topicId: t.topic.id } : { topic: t.topic.name }),
            partitions: t.parts.map((p) => ({ partition: p.partition, fetchOffset: p.fetchOffset ?? 0n, partitionMaxBytes: 1 << 20 })),
          })),
          forgottenTopicsData: (f.forgotten ?? []).map((t) => ({ ...(byId ? { topicId: t.topic.id } : { topic: t.topic.name }), partitions: t.partitions })),
        },
        v,
      ),
    );
    return decodeFetchResponse(r, v);
  }

  /** One Fetch request, reported as a fetcher sees it (session labelled, partitions summarised). */
  async fetch(f: ProbeFetch): Promise<SeenFetch & { sessionId: number }> {
    const res = await this.fetchRaw(f);
    const partitions: SeenPartition[] = [];
    for (const t of res.responses) {
      const short = this.topicNames.get(t.topicId) ?? this.topicNames.get(t.topic) ?? '?';
      for (const p of t.partitions) {
        partitions.push(`${short}:${p.partitionIndex} e${p.errorCode} hw${p.highWatermark} ${(p.records?.length ?? 0) > 0 ? 'records' : 'empty'}`);
      }
    }
    return { errorCode: res.errorCode, session: this.label(res.sessionId), sessionId: res.sessionId, partitions };
  }
}

/** Drops the raw session id so an observation compares across brokers. */
export function seen(f: SeenFetch & { sessionId: number }): SeenFetch {
  return { errorCode: f.errorCode, session: f.session, partitions: f.partitions };
}
