/**
 * What of a share group its records hold, as comparable strings: the coordinator writes only the
 * records whose part of the group changed since its last write (./share-group-coordinator.ts).
 */
import type { PersistedShareMember } from '../coordinator/share-group-records.js';
import type { ShareGroup, ShareMember } from './share-group-model.js';

export interface ShareGroupFingerprint {
  /** Group and target assignment epochs. */
  readonly group: string;
  /** The initialized partitions ('' when none). */
  readonly initialized: string;
  /** Member id → its persisted fields. */
  readonly members: Map<string, string>;
}

/** topic id → the initialized partitions, ascending (topics with none left out). */
export function initializedLists(g: ShareGroup): Map<string, number[]> {
  return new Map([...g.initialized].filter(([, ps]) => ps.size > 0).map(([topicId, ps]) => [topicId, [...ps].sort((a, b) => a - b)]));
}

export function persistedMember(m: ShareMember): PersistedShareMember {
  return { rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost, subscribedTopicNames: m.subscribedTopicNames, memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, assignment: m.assignment };
}

export function shareGroupFingerprint(g: ShareGroup): ShareGroupFingerprint {
  const initialized = g.initialized.size === 0 ? '' : JSON.stringify([...initializedLists(g)].sort());
  return { group: `${g.groupEpoch}:${g.assignmentEpoch}`, initialized, members: new Map([...g.members].map(([id, m]) => [id, JSON.stringify(persistedMember(m), (_, v: unknown) => (v instanceof Map ? [...v].sort() : v))])) };
}
