/**
 * The share group assignment: Kafka's SimpleAssignor for homogeneous subscriptions, per topic,
 * over the partitions whose share-partition state is initialized. With no more members than
 * partitions each partition goes to one member (round robin); with more members, every member
 * gets one partition and partitions are shared. Pure: the coordinator
 * (./share-group-coordinator.ts) decides when to recompute it.
 */
import type { ShareGroup, ShareMember, ShareTopics } from './share-group-model.js';

/** What the assignment depends on: the subscribed topics, their partition counts and initialized partitions. */
export function shareMetadataKey(group: ShareGroup, topics: ShareTopics, initializes: boolean): string {
  const names = new Set<string>();
  for (const m of group.members.values()) for (const n of m.subscribedTopicNames) names.add(n);
  return [...names]
    .sort()
    .map((n) => {
      const id = topics.topicId(n) ?? '';
      return `${n}:${id}:${topics.partitionCount(n) ?? 0}:${initializes ? [...(group.initialized.get(id) ?? [])].sort((a, b) => a - b).join('.') : ''}`;
    })
    .join(',');
}

/**
 * Recomputes every member's assignment at the group epoch. `initializes`: only initialized
 * share-partitions are assignable (without an initializer, every partition is).
 */
export function assignShareGroup(group: ShareGroup, metadataKey: string, topics: ShareTopics, initializes: boolean): void {
  group.metadataKey = metadataKey;
  group.assignmentEpoch = group.groupEpoch;
  const members = [...group.members.values()].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  for (const m of members) m.assignment = new Map();
  const topicNames = new Set<string>();
  for (const m of members) for (const n of m.subscribedTopicNames) topicNames.add(n);
  for (const name of [...topicNames].sort()) {
    const id = topics.topicId(name);
    const count = topics.partitionCount(name) ?? 0;
    if (id === undefined || count === 0) continue;
    const all = Array.from({ length: count }, (_, p) => p);
    const parts = initializes ? all.filter((p) => group.initialized.get(id)?.has(p) === true) : all;
    if (parts.length === 0) continue;
    const subs = members.filter((m) => m.subscribedTopicNames.includes(name));
    const give = (m: ShareMember, p: number): void => {
      const list = m.assignment.get(id) ?? [];
      list.push(p);
      m.assignment.set(id, list);
    };
    if (subs.length <= parts.length) parts.forEach((p, i) => give(subs[i % subs.length]!, p));
    else subs.forEach((m, i) => give(m, parts[i % parts.length]!));
  }
}

/** A member's assignment as a comparable string: the assignment is sent again only when it changes. */
export const assignmentKey = (m: ShareMember): string => JSON.stringify([...m.assignment].sort());
