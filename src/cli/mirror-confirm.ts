/**
 * What `fjord cluster-mirrors --start/--stop/--pause/--resume` says when its request is not
 * answered within the client's request.timeout.ms. A node carries out a request it accepted for
 * every topic the request names, whether or not the client is still connected, so a time-out
 * means "not known yet", not "failed": the command reads the cluster until each topic shows the
 * change (its desired state, from ListClusterMirrors; a pause or resume, from the partitions'
 * states in DescribeClusterMirrors) and reports topic by topic. Topics that do not show it within
 * `--timeout` are named, with exit code 1.
 */
import type { MirrorAdmin } from '../admin/mirror-admin.js';
import { Exit } from './cli-common.js';
import type { CliIo } from './mirror-progress.js';

type ControlAction = 'start' | 'stop' | 'pause' | 'resume';

const POLL_MS = 1000;
const VERB: Readonly<Record<ControlAction, string>> = { start: 'Started', stop: 'Stopped', pause: 'Paused', resume: 'Resumed' };

/** Which of `topics` show `action` as done on the cluster now. */
async function confirmed(admin: MirrorAdmin, mirror: string, action: ControlAction, topics: readonly string[]): Promise<Set<string>> {
  const done = new Set<string>();
  if (action === 'start' || action === 'stop') {
    // topicNames: the topics bound to the mirror whose desired state is not STOPPED.
    const listing = (await admin.listClusterMirrors(true)).find((m) => m.mirrorName === mirror);
    if (listing === undefined) return done;
    const active = new Set(listing.topicNames);
    for (const t of topics) if (active.has(t) === (action === 'start')) done.add(t);
    return done;
  }
  const states = new Map<string, string[]>();
  for (const m of await admin.describeClusterMirrors([mirror])) {
    for (const p of m.partitions) {
      let list = states.get(p.topic);
      if (list === undefined) states.set(p.topic, (list = []));
      list.push(p.state);
    }
  }
  for (const t of topics) {
    const s = states.get(t);
    if (s === undefined || s.length === 0) continue;
    const paused = (x: string): boolean => x === 'PAUSING' || x === 'PAUSED';
    if (action === 'pause' ? s.every(paused) : !s.some(paused)) done.add(t);
  }
  return done;
}

/**
 * After `request` (e.g. "StopMirrorTopics") timed out on the client: waits up to `timeoutS` for
 * each of `topics` to show the change, printing one line per topic as it does.
 */
export async function confirmAfterTimeout(admin: MirrorAdmin, mirror: string, action: ControlAction, topics: readonly string[], timeoutS: number, timedOut: string, io: CliIo): Promise<number> {
  io.err(`${timedOut}. The node carries out the request for every topic it names; waiting up to ${timeoutS} s for each topic to show it.`);
  const pending = new Set(topics);
  const deadline = Date.now() + timeoutS * 1000;
  let lastError: string | null = null;
  while (pending.size > 0) {
    try {
      for (const t of await confirmed(admin, mirror, action, [...pending])) {
        pending.delete(t);
        io.out(`${VERB[action]} mirroring of topic ${t}.`);
      }
      lastError = null;
    } catch (e) {
      // The cluster is busy carrying the request out: its answers may be slow too.
      lastError = (e as Error).message;
    }
    if (pending.size === 0 || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  if (pending.size === 0) return Exit.OK;
  io.err(`Not confirmed within ${timeoutS} s (${pending.size} of ${topics.length} topics)${lastError !== null ? `; last error: ${lastError}` : ''}:`);
  for (const t of pending) io.err(`  ${t}`);
  return Exit.KAFKA_ERROR;
}
