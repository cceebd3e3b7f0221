/**
 * Produce (key 0), v3-13 (advertised from v0 like Kafka 4; v0-2 requests close the connection).
 *
 * Behavior:
 * - Acks must be -1, 0 or 1 (INVALID_REQUIRED_ACKS). acks=0 gets no response; if any partition
 *   failed, the connection is closed instead so the producer notices (Kafka's KafkaApis).
 * - Per partition: unknown topic/partition → UNKNOWN_TOPIC_OR_PARTITION (v13 by id:
 *   UNKNOWN_TOPIC_ID); internal topics → INVALID_TOPIC_EXCEPTION; mirror topics that are not
 *   STOPPED → READ_ONLY_TOPIC (KIP-1279); the batch header is validated without decoding records
 *   (one magic-2 batch, CRC-32C, sizes vs max.message.bytes, zstd only from v7, no control
 *   batches); a compacted topic refuses records without a key (INVALID_RECORD with the batch
 *   indexes in RecordErrors, v8+) — the one case where records are decoded; then appended at the partition's leader epoch. Idempotent sequence/epoch checks and
 *   LogAppendTime rewriting happen in the log; duplicates return the original offsets.
 * - acks=-1 answers after the fsync (group commit); acks=1 after the write.
 * - Replicated partitions (src/replication): a node that is not the unfenced leader answers
 *   NOT_LEADER_OR_FOLLOWER; acks=-1 with an ISR smaller than min.insync.replicas is refused before
 *   the append (NOT_ENOUGH_REPLICAS) and otherwise waits until the ISR has the write
 *   (REQUEST_TIMED_OUT after the request's timeout, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the
 *   ISR shrank below min.insync.replicas, NOT_LEADER_OR_FOLLOWER when leadership moved).
 *
 * - Transactions (KIP-890): the first transactional batch of a transaction on a partition is
 *   checked with the producer's transaction coordinator (add-partitions-to-txn-manager.ts). Before
 *   v12 (transactions V1, part 1) the coordinator verifies that the producer added the partition
 *   (AddPartitionsToTxn): if not, INVALID_TXN_STATE "Partition was not added to the transaction"
 *   (v10 and older) or TRANSACTION_ABORTABLE (v11). From v12 (transactions V2, part 2) the
 *   coordinator adds the partition itself. A stale epoch is INVALID_PRODUCER_EPOCH; a coordinator
 *   that is loading, moving or unreachable is NOT_ENOUGH_REPLICAS (which producers retry), as is
 *   CONCURRENT_TRANSACTIONS (a V2 add retries it for 100 ms first). Nothing is appended when the check fails.
 *   A producer's later batches wait behind a batch still being checked, so they reach the log in
 *   the order sent: the connection starts the next Produce once this one's appends are queued.
 *
 * Version notes: LogAppendTimeMs v2+, LogStartOffset v5+, RecordErrors/ErrorMessage v8+; v13
 * addresses topics by id. A topic compression.type other than `producer` rebuilds batches of
 * another codec in the topic's codec (recompress.ts); otherwise the producer's bytes are stored.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeProduceRequest, type ProduceRequest } from '../../protocol/generated/messages/produce-request.js';
import { encodeProduceResponse, type ProduceResponseInput } from '../../protocol/generated/messages/produce-response.js';
import { DecodeError } from '../../protocol/decode-error.js';
import { KafkaError } from '../../protocol/kafka-error.js';
import { validateProduceRecords, type RecordBatchView } from '../../protocol/record-batch.js';
import { decodeRecords } from '../../protocol/records.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { AppendResult } from '../../storage/partition-log-options.js';
import { INTERNAL_TOPICS, type BrokerContext } from '../broker-context.js';
import { recompressBatch, targetCodec } from '../recompress.js';
import { TxnOperation } from '../add-partitions-to-txn-manager.js';

type TopicOut = NonNullable<ProduceResponseInput['responses']>[number];
type PartOut = NonNullable<TopicOut['partitionResponses']>[number];

/** Indexes (within the batch) of records with a null key: a compacted topic refuses them. */
function recordsWithoutKey(batch: RecordBatchView): number[] {
  const out: number[] = [];
  decodeRecords(batch).forEach((r, i) => {
    if (r.key === null) out.push(i);
  });
  return out;
}

/** What the request version lets the transaction check do (Kafka's KafkaApis.handleProduceRequest). */
function produceOperation(v: number): TxnOperation {
  if (v >= 12) return TxnOperation.ADD_PARTITION;
  return v >= 11 ? TxnOperation.GENERIC_ERROR : TxnOperation.DEFAULT_ERROR;
}

/**
 * Waits for the logs of the request's partitions that are still opening (a topic created a moment
 * before), so that its appends are queued in the order of its partitions and before the next
 * request on the connection is admitted. A log that fails to open ends the wait too: the append
 * path reports the failure.
 */
function logsOpening(ctx: BrokerContext, req: ProduceRequest, byId: boolean): Promise<unknown> | null {
  const opens: Promise<unknown>[] = [];
  for (const td of req.topicData) {
    const topic = byId ? ctx.image.topicsById.get(td.topicId) : ctx.image.topic(td.name);
    if (topic === undefined) continue;
    for (const pd of td.partitionData) {
      if (topic.partitions[pd.index] === undefined) continue;
      if (ctx.replicas.getLog(topic.name, pd.index) === undefined) opens.push(ctx.replicas.ensureLog(topic.name, pd.index));
    }
  }
  return opens.length === 0 ? null : Promise.allSettled(opens);
}

export function produceHandler(ctx: BrokerContext): ApiHandler<ProduceRequest, ProduceResponseInput> {
  return {
    apiKey: 0,
    minVersion: 3,
    maxVersion: 13,
    decode: decodeProduceRequest,
    encode: encodeProduceResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      const acks = req.acks;
      const byId = v >= 13;
      const pending: Promise<void>[] = [];
      const responses: TopicOut[] = [];
      let failedCode: number | null = null;
      const opening = logsOpening(ctx, req, byId);
      if (opening !== null) await opening;
      /** Resolve once the appends behind a transaction check are queued on their logs. */
      const checking: Promise<void>[] = [];
      try {
        for (const td of req.topicData) {
          const topic = byId ? ctx.image.topicsById.get(td.topicId) : ctx.image.topic(td.name);
          const parts: PartOut[] = [];
          responses.push({ ...(byId ? { topicId: td.topicId } : { name: td.name }), partitionResponses: parts });
          for (const pd of td.partitionData) {
            const out = (errorCode: number, errorMessage: string | null): PartOut => {
              if (errorCode !== 0) failedCode ??= errorCode;
              return {
                index: pd.index,
                errorCode,
                baseOffset: -1n,
                logAppendTimeMs: -1n,
                logStartOffset: -1n,
                ...(v >= 8 ? { errorMessage } : {}),
              };
            };
            if (acks !== -1 && acks !== 0 && acks !== 1) {
              parts.push(out(ErrorCode.INVALID_REQUIRED_ACKS, null));
              continue;
            }
            if (!topic || !topic.partitions[pd.index]) {
              parts.push(out(byId && !topic ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null));
              continue;
            }
            if (INTERNAL_TOPICS.has(topic.name)) {
              parts.push(out(ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot append to internal topic ${topic.name}`));
              continue;
            }
            const guarded = ctx.produceGuard === null ? ErrorCode.NONE : (ctx.produceGuard.produceError?.(topic.name, pd.index) ?? (ctx.produceGuard.isProduceAllowed(topic.name, pd.index) ? ErrorCode.NONE : ErrorCode.READ_ONLY_TOPIC));
            if (guarded !== ErrorCode.NONE) {
              parts.push(
                out(guarded, guarded === ErrorCode.READ_ONLY_TOPIC ? `Topic ${topic.name} is a mirror topic and is read-only.` : `Topic ${topic.name} is being stopped; it takes writes once this partition is STOPPED.`),
              );
              continue;
            }
            // Kafka's Partition.appendRecordsToLeader: only the unfenced leader takes writes; a
            // replicated partition only once this node has become its leader at the image's epoch.
            const found = ctx.replicas.openLeaderLog(topic, pd.index, { forAppend: true }) ?? (await ctx.replicas.leaderLog(topic, pd.index, { forAppend: true }));
            if ('errorCode' in found) {
              parts.push(out(found.errorCode, null));
              continue;
            }
            const { part, log, leader, leaderEpoch } = found;
            if (acks === -1) {
              const minIsr = ctx.configs.minInsyncReplicas(topic.name);
              if (part.isr.length < minIsr) {
                const msg = `The size of the current ISR [${part.isr.join(', ')}] is insufficient to satisfy the min.isr requirement of ${minIsr} for partition ${topic.name}-${pd.index}`;
                parts.push(out(ErrorCode.NOT_ENOUGH_REPLICAS, msg));
                continue;
              }
            }
            const check = validateProduceRecords(pd.records, { apiVersion: v, maxMessageSize: log.config.maxMessageBytes });
            if (check.errorCode !== 0) {
              parts.push(out(check.errorCode, check.message));
              continue;
            }
            if (log.config.cleanupPolicy.includes('compact')) {
              let missing: number[];
              try {
                missing = recordsWithoutKey(check.batch!);
              } catch (err) {
                if (!(err instanceof DecodeError)) throw err;
                parts.push(out(ErrorCode.CORRUPT_MESSAGE, err.message));
                continue;
              }
              if (missing.length > 0) {
                // Kafka's LogValidator: the whole batch fails, the keyless records are named.
                const msg = `Compacted topic cannot accept message without key in topic partition ${topic.name}-${pd.index}.`;
                const rejected = out(ErrorCode.INVALID_RECORD, `One or more records have been rejected due to ${missing.length} record errors in total, and only showing the first three errors at most: ${missing.slice(0, 3).map((i) => `[batchIndex=${i}, message=${msg}]`).join(', ')}`);
                parts.push(v >= 8 ? { ...rejected, recordErrors: missing.map((batchIndex) => ({ batchIndex, batchIndexErrorMessage: msg })) } : rejected);
                continue;
              }
            }
            // Exactly the validated batch: trailing bytes that form no whole batch are dropped, as Kafka does.
            let records = check.batch!.bytes;
            const codec = targetCodec(ctx.configs.topicValue(topic.name, 'compression.type'));
            if (codec !== null) {
              try {
                records = recompressBatch(check.batch!, codec) ?? records;
              } catch (err) {
                if (!(err instanceof DecodeError)) throw err;
                parts.push(out(ErrorCode.CORRUPT_MESSAGE, err.message));
                continue;
              }
            }
            const slot = out(0, null);
            parts.push(slot);
            // KIP-890 (Kafka's ReplicaManager through AddPartitionsToTxnManager): the first
            // transactional batch of a transaction on this partition is verified to be in the
            // transaction (v11 and older, part 1) or adds the partition to it (v12+, transactions V2,
            // whose producers send no AddPartitionsToTxn); a refused check appends nothing.
            const batch = check.batch!;
            const adder = ctx.txnPartitions;
            const transactionalId = req.transactionalId;
            const append = (): Promise<AppendResult> => log.appendAsLeader(records, leaderEpoch, { requiredAcks: acks, prevalidated: true });
            let appended: Promise<AppendResult>;
            if (transactionalId !== null && batch.isTransactional && batch.producerId >= 0 && adder !== undefined && !log.hasOngoingTransaction(batch.producerId, batch.producerEpoch)) {
              let queued = (): void => undefined;
              checking.push(new Promise<void>((resolve) => (queued = resolve)));
              appended = (async (): Promise<AppendResult> => {
                try {
                  const c = await adder.forProduce({ transactionalId, producerId: batch.producerId, producerEpoch: batch.producerEpoch, topic: topic.name, partition: pd.index, operation: produceOperation(v) });
                  if (c.errorCode === 0) return append();
                  return { errorCode: c.errorCode, ...(c.errorMessage !== null ? { errorMessage: c.errorMessage } : {}), baseOffset: -1, lastOffset: -1, logAppendTime: -1, logStartOffset: -1 };
                } finally {
                  queued();
                }
              })();
            } else {
              appended = append();
            }
            pending.push(
              appended.then(async (r) => {
                const i = parts.indexOf(slot);
                if (r.errorCode !== 0) {
                  failedCode ??= r.errorCode;
                  parts[i] = out(r.errorCode, r.errorMessage ?? null);
                  return;
                }
                // acks=all on a replicated partition: answered once the high watermark passes the
                // write (Kafka's DelayedProduce), or with the error that kept it from doing so.
                if (acks === -1 && leader !== undefined) {
                  const code = await leader.awaitReplication(r.lastOffset + 1, req.timeoutMs);
                  if (code !== 0) {
                    parts[i] = out(code, null);
                    return;
                  }
                }
                parts[i] = {
                  index: pd.index,
                  errorCode: 0,
                  baseOffset: BigInt(r.baseOffset),
                  logAppendTimeMs: BigInt(r.logAppendTime),
                  logStartOffset: BigInt(r.logStartOffset),
                  ...(v >= 8 ? { errorMessage: null } : {}),
                };
              }),
            );
          }
        }
      } finally {
        // The connection starts the next Produce only once this one admits it (src/server/request-ordering.ts):
        // every append of this request is queued on its log (or refused), so the next may start.
        if (checking.length === 0) rc.admitNext?.();
        else void Promise.all(checking).then(() => rc.admitNext?.());
      }
      // acks=all waits for durability, as Kafka's delayed produce waits for the ISR.
      if (acks === -1 && pending.length > 0) rc.waitingRemotely?.();
      await Promise.all(pending);
      // producer_byte_rate (src/quota): with acks=0 the muting alone throttles, as in Kafka.
      const throttleTimeMs = ctx.quotas.throttleProduce(rc);
      if (acks === 0) {
        if (failedCode !== null) throw new KafkaError(failedCode, 'acks=0 produce failed for some partition');
        return null;
      }
      return { responses, throttleTimeMs };
    },
  };
}
