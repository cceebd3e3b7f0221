import type { StreamsTasks, TaskMap } from './streams-group.js';
import { emptyTasks } from './streams-group.js';

/**
 * The sticky task assignor of streams groups (Kafka's StickyTaskAssignor, the default `sticky`):
 * active tasks are balanced over the members, each member keeping the active tasks it had in the
 * previous target while it is under its share; the rest go to the least loaded member,
 * preferring one that was a standby of the task. Then `numStandbyReplicas` standbys per task, on
 * members of processes other than the active's and each other's, preferring previous standbys,
 * least loaded first. A task with too few other processes gets fewer standbys, as in Kafka.
 * Warm-up tasks are not assigned by this assignor (Kafka's StickyTaskAssignor assigns none).
 */

interface AssignorInput {
  readonly memberId: string;
  readonly processId: string;
  readonly previous: StreamsTasks;
}

const key = (s: string, p: number): string => `${s}\0${p}`;

function owners(members: readonly AssignorInput[], pick: (t: StreamsTasks) => TaskMap): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of members) {
    for (const [s, ps] of pick(m.previous)) {
      for (const p of ps) {
        const k = key(s, p);
        out.set(k, [...(out.get(k) ?? []), m.memberId]);
      }
    }
  }
  return out;
}

function add(t: TaskMap, s: string, p: number): void {
  const l = t.get(s);
  if (l) l.push(p);
  else t.set(s, [p]);
}

export function assignStreamsTasks(members: readonly AssignorInput[], tasks: ReadonlyMap<string, number>, numStandbyReplicas: number): Map<string, StreamsTasks> {
  const out = new Map<string, StreamsTasks>(members.map((m) => [m.memberId, emptyTasks()]));
  if (members.length === 0) return out;
  const all: [string, number][] = [];
  for (const s of [...tasks.keys()].sort()) for (let p = 0; p < tasks.get(s)!; p++) all.push([s, p]);
  const load = new Map(members.map((m) => [m.memberId, 0]));
  const process = new Map(members.map((m) => [m.memberId, m.processId]));
  const prevActive = owners(members, (t) => t.active);
  const prevStandby = owners(members, (t) => t.standby);
  const quota = Math.ceil(all.length / members.length);
  const byLoad = (ids: readonly string[], prefer: readonly string[]): string | undefined =>
    [...ids].sort((a, b) => load.get(a)! - load.get(b)! || Number(prefer.includes(b)) - Number(prefer.includes(a)) || (a < b ? -1 : a > b ? 1 : 0))[0];
  const activeOwner = new Map<string, string>();
  const unassigned: [string, number][] = [];
  for (const [s, p] of all) {
    const prev = (prevActive.get(key(s, p)) ?? []).find((id) => load.get(id)! < quota);
    if (prev !== undefined) {
      add(out.get(prev)!.active, s, p);
      load.set(prev, load.get(prev)! + 1);
      activeOwner.set(key(s, p), prev);
    } else unassigned.push([s, p]);
  }
  const ids = members.map((m) => m.memberId);
  for (const [s, p] of unassigned) {
    const to = byLoad(ids, prevStandby.get(key(s, p)) ?? [])!;
    add(out.get(to)!.active, s, p);
    load.set(to, load.get(to)! + 1);
    activeOwner.set(key(s, p), to);
  }
  for (let r = 0; r < numStandbyReplicas; r++) {
    for (const [s, p] of all) {
      const k = key(s, p);
      const used = new Set<string>([process.get(activeOwner.get(k)!)!]);
      for (const id of ids) if (out.get(id)!.standby.get(s)?.includes(p)) used.add(process.get(id)!);
      const candidates = ids.filter((id) => !used.has(process.get(id)!));
      if (candidates.length === 0) continue;
      const to = byLoad(candidates, prevStandby.get(k) ?? [])!;
      add(out.get(to)!.standby, s, p);
      load.set(to, load.get(to)! + 1);
    }
  }
  for (const t of out.values()) for (const l of [...t.active.values(), ...t.standby.values()]) l.sort((a, b) => a - b);
  return out;
}
