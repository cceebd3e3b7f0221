/**
 * The coordinator side of a gathered WriteMirrorStates: the partitions of one request are written
 * side by side (so the coordinator runtime puts a shard's writes into one batch), a partition the
 * request carries twice is written in request order, and each partition is answered with its own
 * code.
 */
import { describe, expect, it } from 'vitest';
import { MirrorInterBrokerRpcs } from '../../src/mirror/inter-broker-rpcs.js';
import type { MirrorCoordinator, MirrorStateEntry } from '../../src/mirror/mirror-coordinator.js';
import type { MirrorHost } from '../../src/mirror/mirror-host.js';
import { MirrorPartitionState as S } from '../../src/mirror/mirror-partition-state.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { KafkaError } from '../../src/protocol/kafka-error.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('WriteMirrorStates as the coordinator', () => {
  it('writes the partitions of one request side by side, a partition carried twice in order, each answered with its own code', async () => {
    const started: string[] = [];
    const finish = new Map<string, (err?: Error) => void>();
    const coordinator = {
      writeFenced: (_m: string, list: readonly MirrorStateEntry[]) =>
        new Promise<void>((resolve, reject) => {
          const e = list[0]!;
          const label = `${e.partition}:${e.state?.state ?? 'lme'}`;
          started.push(label);
          finish.set(label, (err) => (err === undefined ? resolve() : reject(err)));
        }),
    } as unknown as MirrorCoordinator;
    const host = { topicIdByName: (n: string) => (n === 't' ? 'topic-id' : undefined) } as unknown as MirrorHost;
    const rpcs = new MirrorInterBrokerRpcs(host, coordinator);
    const p = (partitionIndex: number, state: number) => ({ partitionIndex, lastMirrorEpoch: -1, state, leaderEpoch: 3, previousState: S.MIRRORING, retryAttempt: 0, errorMessage: null });
    const answer = rpcs.writeMirrorStates('m', [
      { name: 't', partitions: [p(0, S.STOPPING), p(1, S.STOPPING), p(0, S.STOPPED)] },
      { name: 'gone', partitions: [p(0, S.STOPPING)] },
    ]);
    await flush();
    // Partitions 0 and 1 at once; partition 0's second write waits for its first.
    expect(started).toEqual([`0:${S.STOPPING}`, `1:${S.STOPPING}`]);
    finish.get(`1:${S.STOPPING}`)!(new KafkaError(ErrorCode.FENCED_LEADER_EPOCH, 'fenced'));
    await flush();
    expect(started).toEqual([`0:${S.STOPPING}`, `1:${S.STOPPING}`]);
    finish.get(`0:${S.STOPPING}`)!();
    await flush();
    expect(started).toEqual([`0:${S.STOPPING}`, `1:${S.STOPPING}`, `0:${S.STOPPED}`]);
    finish.get(`0:${S.STOPPED}`)!();
    expect((await answer).map((t) => ({ name: t.name, codes: t.partitions.map((x) => [x.partitionIndex, x.errorCode]) }))).toEqual([
      {
        name: 't',
        codes: [
          [0, 0],
          [1, ErrorCode.FENCED_LEADER_EPOCH],
          [0, 0],
        ],
      },
      { name: 'gone', codes: [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]] },
    ]);
  });
});
