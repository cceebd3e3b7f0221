import type { TopicImage } from '../controller/metadata-image.js';
import { MirrorPartitionState } from '../mirror/mirror-partition-state.js';

/**
 * The ReplicaManager's source-epoch policy (KIP-1279): a topic being mirrored (bound and not
 * STOPPED) keeps only source epochs in its epoch cache, since its batches arrive with the
 * source's leader epochs and destination epoch bumps (fencing, proactive) only guard writes.
 * Once STOPPED the node leads it normally: the next bump, or the first leader append
 * (STOPPING's markers), starts the destination epoch at the log end.
 */
export function holdsSourceEpochs(t: TopicImage): boolean {
  return t.mirror !== null && t.mirror.desiredState !== MirrorPartitionState.STOPPED;
}
