/**
 * Mirror partition states with the byte values of the KIP-1279 reference implementation
 * (MirrorPartitionState.java). The same bytes are used on the wire (ReadMirrorStates State,
 * MirrorPartitionStateValue.State) and as MirrorTopicStateChangeRecord.DesiredState
 * (MIRRORING/PAUSED/STOPPED; UNKNOWN when a topic is unbound) — see docs/mirroring.md, decision D1.
 */
export const MirrorPartitionState = {
  UNKNOWN: -1,
  LOG_TRUNCATION: 0,
  EPOCH_FENCING: 1,
  MIRRORING: 2,
  PAUSING: 3,
  PAUSED: 4,
  STOPPING: 5,
  STOPPED: 6,
  FAILED: 7,
} as const;

export type MirrorPartitionStateValue = (typeof MirrorPartitionState)[keyof typeof MirrorPartitionState];

const NAMES = new Map<number, string>(Object.entries(MirrorPartitionState).map(([k, v]) => [v, k]));

export function mirrorStateName(state: number): string {
  return NAMES.get(state) ?? `UNKNOWN(${state})`;
}

export function isMirrorPartitionState(v: number): v is MirrorPartitionStateValue {
  return NAMES.has(v);
}

