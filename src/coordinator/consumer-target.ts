import type { Assignment, ConsumerGroup, ConsumerMember } from './consumer-group.js';
import { ASSIGNORS } from './assignors.js';
import type { AssignorMember } from './assignors.js';
import { hashMetadata, targetEpochRecord, targetMemberRecord } from './consumer-records.js';
import type { GroupWriteContext } from './group-context.js';
import { topicRegexMatches } from './topic-regex.js';

/**
 * KIP-848 target assignments: which topics members subscribe to (names and regular expressions
 * resolved against the metadata), the metadata hash whose change bumps the group epoch, the
 * assignor the members ask for, and the target computed at the group epoch.
 */

export interface TopicView {
  topicId(name: string): string | undefined;
  topicName(id: string): string | undefined;
  partitionCount(name: string): number | undefined;
  topicNames(): string[];
}

/** An assignment as a set of "topicId:partition" keys, for set arithmetic. */
export function tpKeys(a: Assignment): Set<string> {
  const s = new Set<string>();
  for (const [t, ps] of a) for (const p of ps) s.add(`${t}:${p}`);
  return s;
}

/** The inverse of tpKeys, partitions sorted. */
export function fromKeys(keys: Iterable<string>): Assignment {
  const out: Assignment = new Map();
  for (const k of keys) {
    const i = k.lastIndexOf(':');
    const t = k.slice(0, i);
    const p = Number(k.slice(i + 1));
    const l = out.get(t);
    if (l) l.push(p);
    else out.set(t, [p]);
  }
  for (const l of out.values()) l.sort((a, b) => a - b);
  return out;
}

export class ConsumerTargets {
  constructor(
    private readonly s: GroupWriteContext,
    private readonly topics: TopicView,
  ) {}

  /** Subscribed topic ids of a member (names and regex resolved against the metadata). */
  subscribedIds(m: ConsumerMember): Set<string> {
    const ids = new Set<string>();
    const add = (name: string): void => {
      const id = this.topics.topicId(name);
      if (id !== undefined && (this.topics.partitionCount(name) ?? 0) > 0) ids.add(id);
    };
    for (const n of m.subscribedTopicNames) add(n);
    if (m.subscribedTopicRegex !== null) {
      const regex = m.subscribedTopicRegex;
      for (const n of this.topics.topicNames()) if (topicRegexMatches(regex, n)) add(n);
    }
    return ids;
  }

  /** What the target depends on besides membership: the subscribed topics and their partition counts. */
  metadataHash(g: ConsumerGroup): bigint {
    const ids = new Set<string>();
    for (const m of g.members.values()) for (const id of this.subscribedIds(m)) ids.add(id);
    if (ids.size === 0) return 0n;
    return hashMetadata(
      [...ids]
        .sort()
        .map((id) => `${id}:${this.topics.partitionCount(this.topics.topicName(id) ?? '') ?? 0}`)
        .join(','),
    );
  }

  /** The assignor most members ask for, else the first configured one. */
  assignorFor(g: ConsumerGroup): string {
    const votes = new Map<string, number>();
    for (const m of g.members.values()) if (m.serverAssignor !== null) votes.set(m.serverAssignor, (votes.get(m.serverAssignor) ?? 0) + 1);
    let assignor = this.s.cfg.consumerAssignors[0] ?? 'uniform';
    let best = 0;
    for (const [name, n] of votes) if (n > best) [assignor, best] = [name, n];
    return assignor;
  }

  computeTarget(g: ConsumerGroup): void {
    const s = this.s;
    const counts = new Map<string, number>();
    const members: AssignorMember[] = [];
    for (const m of g.members.values()) {
      const ids = this.subscribedIds(m);
      for (const id of ids) counts.set(id, this.topics.partitionCount(this.topics.topicName(id) ?? '') ?? 0);
      members.push({ memberId: m.memberId, topics: ids, previous: g.target.get(m.memberId) ?? new Map() });
    }
    const assignor = this.assignorFor(g);
    const target = (ASSIGNORS[assignor] ?? ASSIGNORS['uniform']!)(members, counts);
    for (const [memberId, a] of target) {
      if (JSON.stringify([...(g.target.get(memberId) ?? new Map())]) !== JSON.stringify([...a])) s.emit(targetMemberRecord(g.groupId, memberId, a));
      g.target.set(memberId, a);
    }
    for (const memberId of [...g.target.keys()]) if (!g.members.has(memberId)) g.target.delete(memberId);
    g.assignmentEpoch = g.groupEpoch;
    s.emit(targetEpochRecord(g.groupId, g.assignmentEpoch));
  }
}
