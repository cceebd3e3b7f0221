/**
 * The read-only guard of mirror topics (KIP-1279 spec §2): client produce to a topic bound to a
 * mirror is refused with READ_ONLY_TOPIC until its partition is STOPPED. Asked for every produced
 * partition, so it reads the one topic's binding and never lists topics.
 */
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S } from './mirror-partition-state.js';
import type { MirrorPartitionKey, MirrorStateMachine } from './state-machine.js';

export interface ProduceGuardDeps {
  readonly host: MirrorHost;
  readonly machine: MirrorStateMachine;
  keyFor(mirrorName: string, topicId: string, topicName: string, partition: number): MirrorPartitionKey;
  isTracked(key: MirrorPartitionKey): boolean;
}

export class MirrorProduceGuard {
  constructor(private readonly deps: ProduceGuardDeps) {}

  /** Client produce is allowed unless the topic is bound to a mirror and the partition is not STOPPED. */
  isProduceAllowed(topic: string, partition: number): boolean {
    const { host, machine } = this.deps;
    const b = host.mirrorTopicBinding(topic);
    if (b === undefined) return true;
    const key = this.deps.keyFor(b.mirrorName, b.topicId, topic, partition);
    const state = machine.state(key);
    if (state === S.STOPPED) return true;
    // A partition this node has not loaded yet: the desired state decides (a topic that was
    // never started again after a stop has no reason to be read-only).
    return state === S.UNKNOWN && b.desiredState === S.STOPPED && !this.deps.isTracked(key);
  }
}
