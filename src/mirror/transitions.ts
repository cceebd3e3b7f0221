/**
 * The rules of the mirror partition state machine (KIP-1279 spec §7.2, §7.3): which transitions
 * are legal, which state a leader moves a partition to when it (re)discovers it or its desired
 * state changes, and where a FAILED retry goes. Pure functions; the machine is ./state-machine.ts.
 */
import { MirrorPartitionState as S, type MirrorPartitionStateValue as State } from './mirror-partition-state.js';

/**
 * Legal transitions, spec §7.2 (the reference implementation's switch). `from` null means no
 * state at all (never persisted). Self-transitions are always legal (MIRRORING→MIRRORING re-adds
 * fetchers).
 */
export function isValidTransition(from: State | null, to: State): boolean {
  if (from === to) return true;
  switch (to) {
    case S.LOG_TRUNCATION:
      return from === null || from === S.UNKNOWN || from === S.STOPPED || from === S.FAILED;
    case S.EPOCH_FENCING:
      return from === S.MIRRORING;
    case S.MIRRORING:
      return from === S.LOG_TRUNCATION || from === S.EPOCH_FENCING || from === S.PAUSED || from === S.FAILED;
    case S.PAUSING:
      return from === S.MIRRORING;
    case S.PAUSED:
      return from === S.PAUSING;
    case S.STOPPING:
      return (
        // Never persisted: a topic stopped before its leader wrote any state (the reference has
        // no such path; here a desired STOPPED must end writable from every state).
        from === null ||
        from === S.UNKNOWN ||
        from === S.LOG_TRUNCATION ||
        from === S.EPOCH_FENCING ||
        from === S.MIRRORING ||
        // A pause still running when a stop arrives; the reference marks this a race guard.
        from === S.PAUSING ||
        from === S.PAUSED ||
        from === S.FAILED
      );
    case S.STOPPED:
      return from === S.STOPPING;
    case S.FAILED:
      return true;
    case S.UNKNOWN:
      return false;
  }
}

/**
 * The state a leader moves a partition to when it (re)discovers it or its desired state changes,
 * spec §7.3, in this order:
 *  1. desired STOPPED → STOPPING (or stay STOPPED), from FAILED too: stopping is how an operator
 *     fails over away from a broken source (decision D12 in docs/mirroring.md);
 *  2. FAILED stays FAILED otherwise: the retry logic decides, not the desired state;
 *  3. desired PAUSED → PAUSING (or stay PAUSED); from a state that cannot pause directly
 *     (truncating, fencing) the partition first finishes into MIRRORING, so stay; from UNKNOWN or
 *     STOPPED (a start, then a pause, before the leader acted) it starts with LOG_TRUNCATION;
 *  4. PAUSED with desired MIRRORING → MIRRORING (resume: no truncation); PAUSING finishes first;
 *  5. UNKNOWN or STOPPED → LOG_TRUNCATION (fresh start, or restart after failover);
 *  6. otherwise re-enter the current state: a new leader redoes the half-done step.
 */
export function chooseNextState(current: State, desired: State): State {
  if (desired === S.STOPPED) return current === S.STOPPED ? S.STOPPED : S.STOPPING;
  if (current === S.FAILED) return S.FAILED;
  if (desired === S.PAUSED) {
    if (current === S.MIRRORING) return S.PAUSING;
    // A start then a pause before the leader acted on the start: the partition starts (a log
    // that was writable is truncated to the source first), then pauses once MIRRORING.
    if (current === S.UNKNOWN || current === S.STOPPED) return S.LOG_TRUNCATION;
    return current;
  }
  // A resume during PAUSING lets the pause land first (PAUSING → MIRRORING is not a legal
  // transition); the machine re-applies the desired state once PAUSED is reached.
  if (current === S.PAUSING) return S.PAUSING;
  if (current === S.PAUSED) return S.MIRRORING;
  if (current === S.UNKNOWN || current === S.STOPPED) return S.LOG_TRUNCATION;
  return current;
}

/** Where a FAILED retry goes, by the state that failed (every target is legal from FAILED). */
export function retryTarget(previous: State): State {
  switch (previous) {
    case S.MIRRORING:
    case S.EPOCH_FENCING:
    case S.PAUSING:
    case S.PAUSED:
      // Re-entering MIRRORING re-runs the epoch checks; desired PAUSED is re-applied after it.
      return S.MIRRORING;
    case S.STOPPING:
      return S.STOPPING;
    default:
      return S.LOG_TRUNCATION;
  }
}
