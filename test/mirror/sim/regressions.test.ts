/**
 * Seeds on which `npm run simulate` once found a violation, replayed (25 runs each, as the script
 * runs a seed):
 * - 20499: a `__mirror_state` append asked for earlier landed after a later one (the simulation's
 *   appends completed in any order; a partition log places them in order);
 * - 7000026: the stand-in fetcher kept a partition it had failed, so a partition put back in
 *   MIRRORING at a new epoch was never fetched again (the real fetcher detaches it);
 * - 8000233: a start and then a pause reached a topic whose partition was finishing a stop; it
 *   ended STOPPED with the topic's desired state PAUSED, and stop, resume and pause were all
 *   refused with INVALID_CLUSTER_MIRROR_STATES ("a partition of t is STOPPED"): stuck for good.
 * - 16: a stop after a start that failed before mirroring anything; the first leader wrote
 *   STOPPING's markers at destination epoch 1 and was deposed, its successor took the epoch of
 *   the MIRROR_PID_RESET as the last mirrored one, and a failback kept a source batch of epoch 0
 *   that the stopped topic does not have at that offset.
 * - 656718586: a stop before anything was mirrored (nothing recorded), client writes, a start whose
 *   LOG_TRUNCATION failed (the source unreachable), then a stop: the last mirrored epoch was read
 *   from the log's last batch, a client write at a destination epoch, and a failback kept source
 *   records the stopped topic does not have.
 * - 20261257: a `__mirror_state` append asked by a coordinator that then lost the shard and took it
 *   back landed after its new load had read the log (the simulation's log took it while the node
 *   led again; a real append fails once its leader epoch's leader resigns), so the shard answered
 *   STOPPING for a partition persisted STOPPED, and a delete through another node was refused.
 * - 30000000: a leader cut off from the controller went on under its old epoch and persisted
 *   STOPPED; the partition's leader of the epoch it missed had sent a STOPPING that landed after
 *   (a newer epoch); given the partition again, the first kept its STOPPED and never looked at
 *   what was persisted, so the partition stayed STOPPING.
 * - 80000162: a start, then a pause before the partition's leader acted on it; the leader was cut
 *   off from the controller, and its LOG_TRUNCATION write landed after its successor had read
 *   "nothing persisted" and, with desired PAUSED, done nothing: the successor held UNKNOWN for
 *   good while the partition was persisted LOG_TRUNCATION.
 * - 81000945: a node whose metadata deliveries had stalled made a controller write of its own;
 *   its image then named it a partition's leader at a new epoch, while its manager, told nothing
 *   (the simulation brought the image up without running its listeners, which a node's applied
 *   records always run), still held the STOPPED of its earlier term, and the produce guard took a
 *   client write while the partition was persisted LOG_TRUNCATION. The guard now also refuses
 *   while the machine holds the partition at an older epoch than the image.
 * - 83000089: a STOPPING read the partition's open transactions one step before its node's image
 *   named it leader; the simulation answered "none" to a node not leading at that instant (a real
 *   node reads its local replica's producer state), so the stop wrote MIRROR_PID_RESET with no
 *   ABORT before it and a transaction open at the stop read as committed.
 * - 84001450: a node cut off from the controller led a partition again at a new epoch; its
 *   manager noted the epoch at once and only then read the persisted state, so for that read the
 *   guard saw a STOPPED at the image's epoch and took two client writes while another leader, of
 *   an epoch in between, had persisted LOG_TRUNCATION. Its claim of the old STOPPED, fenced, was
 *   then retried at the new epoch and landed over the start. The guard now waits for the node's
 *   own write at the image's epoch, and a fenced write is re-read instead of retried (D31).
 */
import { describe, expect, it } from 'vitest';
import { describeFailure, explore } from './explore.js';

describe('the mirror control plane on seeds that once found a violation', () => {
  for (const seed of [20499, 7000026, 8000233, 16, 656718586, 20261257, 30000000, 80000162, 81000945, 83000089, 84001450]) {
    it(`holds its invariants on seed ${seed}`, async () => {
      const r = await explore(seed, 25);
      expect(r.failure === null ? null : describeFailure(r.failure)).toBeNull();
    }, 120_000);
  }
});
