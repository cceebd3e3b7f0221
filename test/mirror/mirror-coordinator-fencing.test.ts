/**
 * The `__mirror_state` coordinator fences a partition leader's writes by leader epoch. Its own
 * metadata image can lag behind the cluster: a new leader's write at epoch 1 may reach it while
 * its image still says 0, and then a write the deposed leader sent at epoch 0 (held up on the
 * network) arrives. Checked against the image alone, that late write passed and overwrote the new
 * leader's state (its FAILED over the new leader's STOPPED keeps the topic read-only, while the
 * leader takes writes). The coordinator now keeps the newest epoch it accepted per partition,
 * also in the record, so a coordinator that takes the shard over knows it too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MirrorCoordinator } from '../../src/mirror/mirror-coordinator.js';
import { MirrorPartitionState as S, type MirrorPartitionStateValue } from '../../src/mirror/mirror-partition-state.js';
import type { PersistedPartitionState } from '../../src/mirror/state-machine.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { testHost } from '../coordinator/harness.js';
import { TempLogs } from '../coordinator/logs.js';

const TOPIC_ID = '00000000-0000-0000-0000-0000000000aa';
const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

const state = (s: MirrorPartitionStateValue): PersistedPartitionState => ({ state: s, previousState: S.UNKNOWN, retryAttempt: s === S.FAILED ? 1 : 0, errorMessage: s === S.FAILED ? 'source unreachable' : null });

async function refusal(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return ErrorCode.NONE;
  } catch (e) {
    return (e as { code?: number }).code ?? -1;
  }
}

describe('the __mirror_state coordinator fences late writes of a deposed leader', () => {
  it('refuses a write at an older epoch than one it accepted, though its image has not seen the newer epoch', async () => {
    const logs = new TempLogs();
    temps.push(logs);
    // The image here still says epoch 0 throughout.
    const coordinator = new MirrorCoordinator(testHost(logs.openLog), 4, () => 0);
    await coordinator.writeFenced('m1', [{ topicId: TOPIC_ID, partition: 0, state: state(S.STOPPING), leaderEpoch: 1 }]);
    await coordinator.writeFenced('m1', [{ topicId: TOPIC_ID, partition: 0, state: state(S.STOPPED), leaderEpoch: 1 }]);
    expect(await refusal(coordinator.writeFenced('m1', [{ topicId: TOPIC_ID, partition: 0, state: state(S.FAILED), leaderEpoch: 0 }]))).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    expect((await coordinator.read('m1', TOPIC_ID, 0)).state?.state).toBe(S.STOPPED);
    // A last-mirrored-epoch write of the deposed leader is refused the same way.
    expect(await refusal(coordinator.writeFenced('m1', [{ topicId: TOPIC_ID, partition: 0, lastMirrorEpoch: 7, leaderEpoch: 0 }]))).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    expect((await coordinator.read('m1', TOPIC_ID, 0)).lastMirrorEpoch).toBe(-1);
    // Writes at the newest epoch and unfenced writes go on; another partition is not affected.
    await coordinator.writeFenced('m1', [{ topicId: TOPIC_ID, partition: 0, state: state(S.STOPPED), leaderEpoch: 1 }]);
    await coordinator.writeFenced('m1', [{ topicId: TOPIC_ID, partition: 1, state: state(S.FAILED), leaderEpoch: 0 }]);
    expect((await coordinator.read('m1', TOPIC_ID, 1)).state?.state).toBe(S.FAILED);
  });

  it('a coordinator that loads the shard from the log fences the same late write', async () => {
    const logs = new TempLogs();
    temps.push(logs);
    const first = new MirrorCoordinator(testHost(logs.openLog), 4, () => 0);
    await first.writeFenced('m1', [{ topicId: TOPIC_ID, partition: 0, state: state(S.STOPPED), leaderEpoch: 3 }]);
    await first.runtime.close();
    await logs.closeAll();
    const next = new MirrorCoordinator(testHost(logs.openLog), 4, () => 2);
    expect(await refusal(next.writeFenced('m1', [{ topicId: TOPIC_ID, partition: 0, state: state(S.FAILED), leaderEpoch: 2 }]))).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    expect((await next.read('m1', TOPIC_ID, 0)).state?.state).toBe(S.STOPPED);
  });
});
