/**
 * Runs one fuzz sequence on a broker: substitutes the placeholders with this broker's own names,
 * ids and the state earlier answers gave (member id, generation, producer id and epoch), sends each
 * step on one connection, decodes the answer with the generated decoder, and waits, as a client
 * would, for what the answer says is happening in the background (a topic being created or
 * deleted, a group a JoinGroup created being written) before the next step, so the two brokers
 * are compared in the same state.
 */
import { ErrorCode } from '../../../src/protocol/generated/errors.js';
import { encodeDescribeGroupsRequest } from '../../../src/protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse } from '../../../src/protocol/generated/messages/describe-groups-response.js';
import { encodeMetadataRequest } from '../../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse, type MetadataResponse } from '../../../src/protocol/generated/messages/metadata-response.js';
import { Writer } from '../../../src/protocol/writer.js';
import { FuzzConnection } from './connection.js';
import { codecFor, ZERO_UUID, type Input, type Value } from './schema-requests.js';
import { FIXTURE_ID, GENERATION, MEMBER, OWN_ID, PRODUCER_EPOCH, PRODUCER_ID, TXN_BATCH, txnBatch, type Step } from './steps.js';

export interface BrokerUnderTest {
  readonly name: 'kafka' | 'fjord';
  readonly port: number;
}

/** What one step got back, decoded (or why not). */
export type Outcome = { readonly kind: 'answer'; readonly body: Input } | { readonly kind: 'closed' } | { readonly kind: 'silent' } | { readonly kind: 'undecodable'; readonly error: string };

export interface Names {
  readonly own: string;
  readonly fixture: string;
  readonly group: string;
  readonly txn: string;
}

/** How long one request may take before it counts as unanswered (a JoinGroup waits for its rebalance). */
const ANSWER_WAIT_MS = 20_000;
/**
 * Requests that change a topic (Produce, AddPartitionsToTxn, TxnOffsetCommit, WriteTxnMarkers,
 * DeleteTopics, DeleteRecords, CreatePartitions, AlterPartitionReassignments, AlterConfigs,
 * IncrementalAlterConfigs): where one broker accepts what the other refuses, the fixture would
 * differ for every later sequence, so these go to the sequence's own topic instead.
 */
const DESTRUCTIVE = new Set([0, 24, 27, 28, 20, 21, 37, 45, 33, 44]);
const SETTLE_MS = 30_000;
const RETRIES = 25;
/** LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR. */
const RETRIABLE = new Set<number>([5, 6, 14, 15, 16]);

function hasCode(v: unknown, codes: ReadonlySet<number>): boolean {
  if (Array.isArray(v)) return v.some((x) => hasCode(x, codes));
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v) || v instanceof Map) return false;
  for (const [k, x] of Object.entries(v as Input)) {
    if ((k === 'errorCode' || k === 'partitionErrorCode') && typeof x === 'number' && codes.has(x)) return true;
    if (typeof x === 'object' && hasCode(x, codes)) return true;
  }
  return false;
}

export class SequenceRun {
  private conn: FuzzConnection | null = null;
  private member = '';
  private generation = -1;
  private producerId = -1n;
  private producerEpoch = -1;
  requests = 0;

  constructor(
    readonly broker: BrokerUnderTest,
    readonly names: Names,
  ) {}

  private async connection(): Promise<FuzzConnection> {
    if (!this.conn || this.conn.closed) this.conn = await FuzzConnection.open(this.broker.port);
    return this.conn;
  }

  close(): void {
    this.conn?.close();
    this.conn = null;
  }

  private async topicId(name: string): Promise<string> {
    const md = await this.metadata([name]);
    const t = md?.topics[0];
    return t && t.errorCode === 0 ? t.topicId : ZERO_UUID;
  }

  async metadata(names: string[]): Promise<MetadataResponse | null> {
    const c = await this.connection();
    const r = await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: names.map((name) => ({ name })), allowAutoTopicCreation: false }, 12), ANSWER_WAIT_MS);
    this.requests++;
    return typeof r === 'string' ? null : decodeMetadataResponse(r, 12);
  }

  /**
   * The request with this broker's names, ids and state in place of the placeholders. Requests
   * that change a topic name the sequence's own topic for the fixture (see DESTRUCTIVE).
   */
  private async substitute(v: Value, destructive = false): Promise<Value> {
    if (typeof v === 'string') {
      if (v === MEMBER) return this.member;
      if (v === OWN_ID || (destructive && v === FIXTURE_ID)) return this.topicId(this.names.own);
      if (v === FIXTURE_ID) return this.topicId(this.names.fixture);
      const fixture = destructive ? this.names.own : this.names.fixture;
      for (const [p, real] of [['$own', this.names.own], ['$fixture', fixture], ['$group', this.names.group], ['$txn', this.names.txn]] as const) {
        if (v.startsWith(p)) return real + v.slice(p.length);
      }
      return v;
    }
    if (typeof v === 'bigint') return v === PRODUCER_ID ? this.producerId : v;
    if (typeof v === 'number') {
      if (v === PRODUCER_EPOCH) return this.producerEpoch;
      return v;
    }
    if (Buffer.isBuffer(v)) return v.equals(TXN_BATCH) ? txnBatch(this.producerId, this.producerEpoch) : v;
    if (Array.isArray(v)) return Promise.all(v.map((x) => this.substitute(x, destructive)));
    if (v !== null && typeof v === 'object' && !(v instanceof Map)) {
      const out: Input = {};
      for (const [k, x] of Object.entries(v as Input)) out[k] = k === 'generationId' || k === 'generationIdOrMemberEpoch' ? (x === GENERATION ? this.generation : x) : await this.substitute(x, destructive);
      return out;
    }
    return v;
  }

  /** The step as this broker receives it (for the report). */
  async concrete(step: Step): Promise<Input> {
    const input = (await this.substitute(step.input, DESTRUCTIVE.has(step.apiKey))) as Input;
    // acks=0 gets no answer by design; the comparison needs one.
    if (step.apiKey === 0 && input['acks'] === 0) input['acks'] = 1;
    return input;
  }

  async send(step: Step): Promise<{ outcome: Outcome; sent: Input }> {
    const codec = await codecFor(step.apiKey);
    const sent = await this.concrete(step);
    let frameBody: (w: Writer) => void;
    try {
      // Encode once up front: a value the chosen version cannot carry is the generator's
      // business, not the broker's.
      const probe = new Writer();
      codec.encode(probe, sent, step.version);
      frameBody = (w) => codec.encode(w, sent, step.version);
    } catch (e) {
      return { outcome: { kind: 'undecodable', error: `not encodable: ${(e as Error).message}` }, sent };
    }
    let body: Input;
    for (let attempt = 0; ; attempt++) {
      const c = await this.connection();
      const r = await c.call(step.apiKey, step.version, frameBody, ANSWER_WAIT_MS);
      this.requests++;
      if (r === 'closed' || r === 'silent') {
        // An unanswered request leaves its answer in flight; the next step starts on a new connection.
        this.close();
        return { outcome: { kind: r }, sent };
      }
      try {
        body = codec.decodeResponse(r, step.version);
      } catch (e) {
        return { outcome: { kind: 'undecodable', error: (e as Error).message }, sent };
      }
      // A leader or coordinator still settling answers "not yet" for a while after a create; a
      // client retries, and so does the runner (nothing was written under these codes).
      if (attempt >= RETRIES || !hasCode(body, RETRIABLE)) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    this.learn(step, body);
    await this.settle(step, sent, body);
    return { outcome: { kind: 'answer', body }, sent };
  }

  /** Keeps what later steps of the sequence refer to. */
  private learn(step: Step, body: Input): void {
    if (step.apiKey === 11) {
      const member = body['memberId'];
      if (typeof member === 'string' && member !== '') this.member = member;
      const gen = body['generationId'];
      if (typeof gen === 'number' && body['errorCode'] === 0) this.generation = gen;
    }
    if (step.apiKey === 22 && body['errorCode'] === 0) {
      this.producerId = body['producerId'] as bigint;
      this.producerEpoch = body['producerEpoch'] as number;
    }
  }

  /**
   * A JoinGroup that creates a classic group answers before the group's record is committed
   * (MEMBER_ID_REQUIRED in Kafka's group coordinator completes at once), and Kafka's DescribeGroups
   * reads at the committed offset: asked within a few milliseconds it says Dead
   * (GROUP_ID_NOT_FOUND at v6), a moment later Empty. Waits until the group is visible.
   */
  private async settleGroup(groupId: string): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      const c = await this.connection();
      const r = await c.call(15, 5, (w) => encodeDescribeGroupsRequest(w, { groups: [groupId], includeAuthorizedOperations: false }, 5), ANSWER_WAIT_MS);
      this.requests++;
      if (typeof r === 'string') return;
      const g = decodeDescribeGroupsResponse(r, 5).groups[0];
      if (g === undefined || g.errorCode !== ErrorCode.NONE || g.groupState !== 'Dead' || Date.now() > deadline) return;
      await new Promise((res) => setTimeout(res, 20));
    }
  }

  /** Waits until the background work the answer announced is visible, as a client's retry would. */
  private async settle(step: Step, sent: Input, body: Input): Promise<void> {
    if (step.apiKey === 11 && (body['errorCode'] === ErrorCode.NONE || body['errorCode'] === ErrorCode.MEMBER_ID_REQUIRED) && typeof sent['groupId'] === 'string') {
      await this.settleGroup(sent['groupId']);
      return;
    }
    const appear: string[] = [];
    const vanish: string[] = [];
    const topicsOf = (o: Input): Input[] => ((o['topics'] ?? []) as Input[]).filter((t) => t !== null && typeof t === 'object');
    if (step.apiKey === 3 && (step.version < 4 || sent['allowAutoTopicCreation'] === true)) {
      for (const t of topicsOf(body)) if (t['errorCode'] === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && typeof t['name'] === 'string') appear.push(t['name']);
    }
    if (step.apiKey === 19 && sent['validateOnly'] !== true) {
      for (const t of topicsOf(body)) if (t['errorCode'] === 0 && typeof t['name'] === 'string') appear.push(t['name']);
    }
    if (step.apiKey === 20) {
      const responses = (body['responses'] ?? []) as Input[];
      for (const t of responses) if (t['errorCode'] === 0 && typeof t['name'] === 'string') vanish.push(t['name']);
    }
    if (appear.length === 0 && vanish.length === 0) return;
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      const md = await this.metadata([...appear, ...vanish]);
      const ok =
        md !== null &&
        md.topics.every((t) => {
          if (vanish.includes(t.name ?? '')) return t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          // An auto-create of a name the broker then refused never appears; only a valid name is awaited.
          if (t.errorCode === ErrorCode.INVALID_TOPIC_EXCEPTION) return true;
          return t.errorCode === 0 && t.partitions.length > 0 && t.partitions.every((p) => p.leaderId >= 0);
        });
      if (ok || Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
