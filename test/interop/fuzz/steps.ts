/**
 * The steps a fuzz sequence is made of, as pure data (so fast-check can shrink them): a request
 * generated from the schema for any API key and version both brokers serve, or one of the
 * well-formed operations on the sequence's own topic, group and transactional id that make
 * state-dependent sequences likely (create → describe → alter → delete → describe; produce →
 * fetch at the log's edges; join/sync/heartbeat/leave in any order; transactions in any order).
 *
 * Placeholders stand for what only the broker knows or what each run must make fresh:
 * `$own`/`$fixture`/`$group`/`$txn` prefixes for names, OWN_ID/FIXTURE_ID for topic ids, `$member`
 * for the member id the last JoinGroup gave, PRODUCER_ID/PRODUCER_EPOCH/GENERATION for the last
 * InitProducerId and JoinGroup answers. The executor substitutes each broker's own values.
 */
import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { RECORD_BASE_TS } from './normalize.js';
import type { MessageModel } from '../../../codegen/schema.mjs';
import { buildRecordBatch } from '../../../src/protocol/records.js';
import { requestInput, type Input, type NamePool } from './schema-requests.js';

export interface Step {
  readonly apiKey: number;
  readonly version: number;
  readonly input: Input;
  /** `generated` from the schema, or the name of the well-formed operation. */
  readonly origin: string;
}

export const OWN_ID = 'ffffffff-0000-4000-8000-00000000000a';
export const FIXTURE_ID = 'ffffffff-0000-4000-8000-00000000000b';
export const PRODUCER_ID = -77n;
export const PRODUCER_EPOCH = -77;
export const GENERATION = -77;
export const MEMBER = '$member';

export const PLACEHOLDER_POOL: NamePool = { ownTopic: '$own', fixtureTopic: '$fixture', group: '$group', transactionalId: '$txn', topicIds: [OWN_ID, FIXTURE_ID] };

/** API keys the generated half never sends: they change the connection's or the cluster's shape, not what a client sees. */
export const NOT_GENERATED: ReadonlyMap<number, string> = new Map([
  [17, 'SaslHandshake: connection state; the malformed-frame fuzzer sends it out of order'],
  [36, 'SaslAuthenticate: connection state; the malformed-frame fuzzer sends it out of order'],
  [57, 'UpdateFeatures: could change the metadata version of the reference broker'],
  [64, 'UnregisterBroker: could unregister the reference broker itself'],
  [80, 'AddRaftVoter: changes the reference broker\'s quorum'],
  [81, 'RemoveRaftVoter: could remove the reference broker\'s only voter'],
  [82, 'UpdateRaftVoter: changes the reference broker\'s quorum'],
]);

const consumerMetadata = Buffer.from('000300000001000000', 'hex');

/** Stands for a transactional batch of the broker's own producer id and epoch, built when sent. */
export const TXN_BATCH = Buffer.from('$txn-batch');

/** The transactional batch TXN_BATCH stands for, once the producer id and epoch are known. */
export function txnBatch(producerId: bigint, producerEpoch: number): Buffer {
  return buildRecordBatch({ records: [{ value: Buffer.from('t'), timestamp: RECORD_BASE_TS }], producerId: Number(producerId), producerEpoch, baseSequence: 0, isTransactional: true });
}

function batch(n: number): Buffer {
  return buildRecordBatch({ records: Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`k${i % 2}`), value: Buffer.from(`v${i}`), timestamp: RECORD_BASE_TS + i })) });
}

const offsets = fc.constantFrom(-2n, -1n, 0n, 1n, 2n, 3n, 4n, 100n);

/** Well-formed operations on the sequence's own names, at versions both brokers serve. */
function operations(serves: (key: number, v: number) => boolean): Arbitrary<Step>[] {
  const op = (origin: string, apiKey: number, version: number, input: Arbitrary<Input>): Arbitrary<Step> | null =>
    serves(apiKey, version) ? input.map((i) => ({ apiKey, version, input: i, origin })) : null;
  const ops = [
    op('create-topic', 19, 7, fc.record({ partitions: fc.constantFrom(1, 2, 0, -1), rf: fc.constantFrom(1, -1, 2), segment: fc.constantFrom(null, '1048576', '200', '104857600'), validateOnly: fc.boolean() }).map(({ partitions, rf, segment, validateOnly }) => ({
      topics: [{ name: '$own', numPartitions: partitions, replicationFactor: rf, assignments: [], configs: segment === null ? [] : [{ name: 'segment.bytes', value: segment }] }],
      timeoutMs: 10_000,
      validateOnly,
    }))),
    op('metadata', 3, 12, fc.record({ auto: fc.boolean(), byId: fc.boolean() }).map(({ auto, byId }) => ({ topics: [byId ? { name: null, topicId: OWN_ID } : { name: '$own' }], allowAutoTopicCreation: auto, includeTopicAuthorizedOperations: false }))),
    op('describe-configs', 32, 4, fc.constantFrom('$own', '$fixture').map((name) => ({ resources: [{ resourceType: 2, resourceName: name, configurationKeys: ['segment.bytes', 'retention.ms', 'cleanup.policy', 'max.message.bytes'] }], includeSynonyms: false, includeDocumentation: false }))),
    op('alter-config', 44, 1, fc.record({ key: fc.constantFrom('segment.bytes', 'retention.ms', 'cleanup.policy', 'max.message.bytes', 'min.insync.replicas', 'no.such.key'), value: fc.constantFrom('200', '1048576', '-1', '0', 'compact', 'abc', null), op: fc.constantFrom(0, 1, 2, 3), validateOnly: fc.boolean() }).map(({ key, value, op: o, validateOnly }) => ({
      resources: [{ resourceType: 2, resourceName: '$own', configs: [{ name: key, configOperation: o, value }] }],
      validateOnly,
    }))),
    op('delete-topic', 20, 6, fc.boolean().map((byId) => ({ topics: [byId ? { name: null, topicId: OWN_ID } : { name: '$own', topicId: '00000000-0000-0000-0000-000000000000' }], timeoutMs: 10_000 }))),
    op('produce', 0, 11, fc.record({ n: fc.constantFrom(1, 3), partition: fc.constantFrom(0, 1, 5), acks: fc.constantFrom(-1, 1) }).map(({ n, partition, acks }) => ({
      transactionalId: null,
      acks,
      timeoutMs: 10_000,
      topicData: [{ name: '$own', partitionData: [{ index: partition, records: batch(n) }] }],
    }))),
    op('fetch', 1, 12, fc.record({ offset: offsets, partition: fc.constantFrom(0, 1), isolation: fc.constantFrom(0, 1) }).map(({ offset, partition, isolation }) => ({
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1_048_576,
      isolationLevel: isolation,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: '$own', partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1_048_576 }] }],
      forgottenTopicsData: [],
      rackId: '',
    }))),
    op('list-offsets', 2, 8, fc.record({ ts: fc.constantFrom(-1n, -2n, -3n, 0n, BigInt(RECORD_BASE_TS + 1)), isolation: fc.constantFrom(0, 1) }).map(({ ts, isolation }) => ({
      replicaId: -1,
      isolationLevel: isolation,
      topics: [{ name: '$own', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: ts }] }],
    }))),
    op('delete-records', 21, 2, offsets.map((offset) => ({ topics: [{ name: '$own', partitions: [{ partitionIndex: 0, offset }] }], timeoutMs: 10_000 }))),
    op('find-coordinator', 10, 4, fc.constantFrom(0, 1).map((keyType) => ({ keyType, coordinatorKeys: [keyType === 0 ? '$group' : '$txn'] }))),
    op('join-group', 11, 9, fc.record({ member: fc.constantFrom('', MEMBER, 'unknown'), session: fc.constantFrom(10_000, 1000) }).map(({ member, session }) => ({
      groupId: '$group',
      sessionTimeoutMs: session,
      rebalanceTimeoutMs: 5_000,
      memberId: member,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: consumerMetadata }],
      reason: null,
    }))),
    op('sync-group', 14, 5, fc.record({ gen: fc.constantFrom(GENERATION, 0, 99), member: fc.constantFrom(MEMBER, 'unknown') }).map(({ gen, member }) => ({
      groupId: '$group',
      generationId: gen,
      memberId: member,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: member === MEMBER ? [{ memberId: MEMBER, assignment: Buffer.from('0003000000000000', 'hex') }] : [],
    }))),
    op('heartbeat', 12, 4, fc.record({ gen: fc.constantFrom(GENERATION, 0, 99), member: fc.constantFrom(MEMBER, 'unknown', '') }).map(({ gen, member }) => ({ groupId: '$group', generationId: gen, memberId: member, groupInstanceId: null }))),
    op('leave-group', 13, 5, fc.constantFrom(MEMBER, 'unknown').map((member) => ({ groupId: '$group', members: [{ memberId: member, groupInstanceId: null, reason: null }] }))),
    op('offset-commit', 8, 9, fc.record({ gen: fc.constantFrom(GENERATION, -1, 99), member: fc.constantFrom(MEMBER, '', 'unknown'), offset: offsets }).map(({ gen, member, offset }) => ({
      groupId: '$group',
      generationIdOrMemberEpoch: gen,
      memberId: member,
      groupInstanceId: null,
      topics: [{ name: '$own', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
    }))),
    op('offset-fetch', 9, 8, fc.constant({ groups: [{ groupId: '$group', topics: null }], requireStable: true })),
    op('describe-groups', 15, 5, fc.constant({ groups: ['$group'], includeAuthorizedOperations: false })),
    op('init-producer-id', 22, 5, fc.record({ txn: fc.boolean(), timeout: fc.constantFrom(60_000, 0, 2_147_483_647) }).map(({ txn, timeout }) => ({ transactionalId: txn ? '$txn' : null, transactionTimeoutMs: timeout, producerId: -1n, producerEpoch: -1 }))),
    op('add-partitions-to-txn', 24, 3, fc.constant({ v3AndBelowTransactionalId: '$txn', v3AndBelowProducerId: PRODUCER_ID, v3AndBelowProducerEpoch: PRODUCER_EPOCH, v3AndBelowTopics: [{ name: '$own', partitions: [0] }] })),
    op('txn-produce', 0, 11, fc.constant({ transactionalId: '$txn', acks: -1, timeoutMs: 10_000, topicData: [{ name: '$own', partitionData: [{ index: 0, records: TXN_BATCH }] }] })),
    op('add-offsets-to-txn', 25, 3, fc.constant({ transactionalId: '$txn', producerId: PRODUCER_ID, producerEpoch: PRODUCER_EPOCH, groupId: '$group' })),
    op('txn-offset-commit', 28, 3, fc.constant({ transactionalId: '$txn', groupId: '$group', producerId: PRODUCER_ID, producerEpoch: PRODUCER_EPOCH, generationId: -1, memberId: '', groupInstanceId: null, topics: [{ name: '$own', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }] })),
    op('end-txn', 26, 3, fc.boolean().map((committed) => ({ transactionalId: '$txn', producerId: PRODUCER_ID, producerEpoch: PRODUCER_EPOCH, committed }))),
    op('elect-leaders', 43, 2, fc.record({ timeout: fc.constantFrom(0, -1, 10_000), type: fc.constantFrom(0, 1), all: fc.boolean() }).map(({ timeout, type, all }) => ({
      electionType: type,
      topicPartitions: all ? null : [{ topic: '$own', partitions: [0, 7] }],
      timeoutMs: timeout,
    }))),
    op('describe-transactions', 65, 0, fc.constant({ transactionalIds: ['$txn'] })),
  ];
  return ops.filter((o): o is Arbitrary<Step> => o !== null);
}

/** One step: a schema-generated request (any served key and version) or a well-formed operation. */
export function stepArb(models: ReadonlyMap<number, MessageModel>, served: ReadonlyMap<number, readonly [number, number]>): Arbitrary<Step> {
  const pairs: [number, number][] = [];
  for (const [key, [lo, hi]] of served) {
    if (NOT_GENERATED.has(key) || !models.has(key)) continue;
    for (let v = lo; v <= hi; v++) pairs.push([key, v]);
  }
  const generated = fc.constantFrom(...pairs).chain(([apiKey, version]) => requestInput(models.get(apiKey)!, version, PLACEHOLDER_POOL).map((input): Step => ({ apiKey, version, input, origin: 'generated' })));
  const serves = (k: number, v: number): boolean => {
    const r = served.get(k);
    return r !== undefined && v >= r[0] && v <= r[1];
  };
  return fc.oneof({ weight: 1, arbitrary: generated }, { weight: 2, arbitrary: fc.oneof(...operations(serves)) });
}

/** A sequence of steps; shrinking drops and simplifies steps. */
export function sequenceArb(models: ReadonlyMap<number, MessageModel>, served: ReadonlyMap<number, readonly [number, number]>, maxLength = 8): Arbitrary<Step[]> {
  return fc.array(stepArb(models, served), { minLength: 1, maxLength });
}

/** Every (key, version) pair the generated half can send: the coverage denominator. */
export function generatedPairs(models: ReadonlyMap<number, MessageModel>, served: ReadonlyMap<number, readonly [number, number]>): string[] {
  const out: string[] = [];
  for (const [key, [lo, hi]] of served) {
    if (NOT_GENERATED.has(key) || !models.has(key)) continue;
    for (let v = lo; v <= hi; v++) out.push(`${key}v${v}`);
  }
  return out;
}
