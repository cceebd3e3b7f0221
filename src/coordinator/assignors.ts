import type { Assignment } from './consumer-group.js';

/**
 * Server-side assignors of the KIP-848 consumer protocol. Both are deterministic (sorted member
 * ids and topic ids) so that a coordinator replaying the same inputs computes the same target.
 */

export interface AssignorMember {
  readonly memberId: string;
  /** Topic ids the member subscribes to (only existing topics). */
  readonly topics: ReadonlySet<string>;
  /** Its previous target, kept where possible (stickiness). */
  readonly previous: Assignment;
}

/** topic id → partition count. */
type TopicPartitionCounts = ReadonlyMap<string, number>;

type AssignorFn = (members: readonly AssignorMember[], topics: TopicPartitionCounts) => Map<string, Assignment>;

function addPartition(a: Assignment, topicId: string, p: number): void {
  const list = a.get(topicId);
  if (list) list.push(p);
  else a.set(topicId, [p]);
}

function sortAssignment(a: Assignment): Assignment {
  const out: Assignment = new Map();
  for (const t of [...a.keys()].sort()) out.set(t, [...a.get(t)!].sort((x, y) => x - y));
  return out;
}

const byId = (a: { memberId: string }, b: { memberId: string }): number => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0);

/**
 * Uniform (Kafka's UniformAssignor, simplified): spreads every subscribed partition so that
 * member loads differ by at most one among members sharing subscriptions, keeping a member's
 * previous partitions where that does not break the balance.
 */
export const uniformAssignor: AssignorFn = (membersIn, topics) => {
  const members = [...membersIn].sort(byId);
  const out = new Map<string, Assignment>(members.map((m) => [m.memberId, new Map()]));
  if (members.length === 0) return out;
  const all: [string, number][] = [];
  for (const t of [...topics.keys()].sort()) {
    if (!members.some((m) => m.topics.has(t))) continue;
    for (let p = 0; p < topics.get(t)!; p++) all.push([t, p]);
  }
  // Quotas: each member's fair share of the partitions it can take.
  const eligible = new Map<string, number>(members.map((m) => [m.memberId, 0]));
  for (const [t] of all) for (const m of members) if (m.topics.has(t)) eligible.set(m.memberId, eligible.get(m.memberId)! + 1);
  const base = Math.floor(all.length / members.length);
  let extra = all.length % members.length;
  const quota = new Map<string, number>();
  for (const m of members) {
    const q = base + (extra > 0 ? 1 : 0);
    if (extra > 0) extra--;
    quota.set(m.memberId, Math.min(q, eligible.get(m.memberId)!));
  }
  const load = new Map<string, number>(members.map((m) => [m.memberId, 0]));
  const taken = new Set<string>();
  // Sticky pass.
  for (const m of members) {
    for (const [t, parts] of m.previous) {
      if (!m.topics.has(t) || !topics.has(t)) continue;
      for (const p of parts) {
        const key = `${t}:${p}`;
        if (p >= topics.get(t)! || taken.has(key) || load.get(m.memberId)! >= quota.get(m.memberId)!) continue;
        taken.add(key);
        addPartition(out.get(m.memberId)!, t, p);
        load.set(m.memberId, load.get(m.memberId)! + 1);
      }
    }
  }
  // Fill: each free partition goes to the least-loaded subscribed member (under quota first).
  for (const [t, p] of all) {
    if (taken.has(`${t}:${p}`)) continue;
    let best: AssignorMember | undefined;
    for (const m of members) {
      if (!m.topics.has(t)) continue;
      const under = load.get(m.memberId)! < quota.get(m.memberId)!;
      if (!best) best = m;
      else {
        const bestUnder = load.get(best.memberId)! < quota.get(best.memberId)!;
        if ((under && !bestUnder) || (under === bestUnder && load.get(m.memberId)! < load.get(best.memberId)!)) best = m;
      }
    }
    if (!best) continue;
    addPartition(out.get(best.memberId)!, t, p);
    load.set(best.memberId, load.get(best.memberId)! + 1);
  }
  for (const [id, a] of out) out.set(id, sortAssignment(a));
  return out;
};

/**
 * Range (Kafka's RangeAssignor): per topic, the subscribed members in member-id order get
 * contiguous ranges; the first `partitions % members` get one more.
 */
export const rangeAssignor: AssignorFn = (membersIn, topics) => {
  const members = [...membersIn].sort(byId);
  const out = new Map<string, Assignment>(members.map((m) => [m.memberId, new Map()]));
  for (const t of [...topics.keys()].sort()) {
    const subs = members.filter((m) => m.topics.has(t));
    if (subs.length === 0) continue;
    const n = topics.get(t)!;
    const per = Math.floor(n / subs.length);
    const extra = n % subs.length;
    let next = 0;
    subs.forEach((m, i) => {
      const count = per + (i < extra ? 1 : 0);
      for (let k = 0; k < count; k++) addPartition(out.get(m.memberId)!, t, next++);
    });
  }
  return out;
};

export const ASSIGNORS: Readonly<Record<string, AssignorFn>> = { uniform: uniformAssignor, range: rangeAssignor };
