/**
 * BumpLeaderEpochs semantics (KIP-1279 spec §9.4, the controller's PartitionChangeRecord v3 with
 * an explicit LeaderEpoch): when the partition's current leader epoch is ≤ `minLeaderEpoch`, the
 * new epoch is max(min + 1, current); otherwise nothing changes. Resolves with the epoch the
 * partition has afterwards, once the image shows it.
 *
 * `whileMirrored` is for every bump but STOPPING's own (fencing, proactive, BumpLeaderEpochs from
 * a fetcher): it is refused with MIRROR_TOPIC_BEING_STOPPED once the topic is desired STOPPED,
 * because from then on a bump goes into the epoch cache while source batches may still be
 * appended below it (see MirrorControllerOp).
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { MirrorHost } from './mirror-host.js';

export async function bumpLeaderEpoch(
  host: MirrorHost,
  topic: string,
  topicId: string,
  partition: number,
  minLeaderEpoch: number,
  opts: { readonly whileMirrored: boolean },
): Promise<number> {
  const current = host.leaderEpoch(topic, partition);
  if (current === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown partition ${topic}-${partition}`);
  if (current > minLeaderEpoch) return current;
  const leaderEpoch = Math.max(minLeaderEpoch + 1, current);
  const res = await host.controllerWrite([{ type: 'bumpLeaderEpoch', topicId, partition, leaderEpoch, whileMirrored: opts.whileMirrored }]);
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, `BumpLeaderEpochs failed with error ${res.errorCode}: ${res.errorMessage ?? ''}`);
  return leaderEpoch;
}
