/**
 * The rules a change of a mirror topic's desired state must pass (KIP-1279 spec §4.2, §4.3), as
 * pure functions of the binding they apply to. They run twice: on the receiving node, against
 * its own image, to answer the request; and inside the atomic metadata write, against the image
 * at the log's head, every time the compare-and-swap is retried (`validateMirrorOps`). The second
 * run is what keeps two nodes from each validating against an image the other's write has
 * already changed (a stop through one node and a pause through another must not land PAUSED
 * after STOPPED).
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { mirrorConfigDefault, splitList } from './mirror-config.js';
import type { MirrorControllerOp, MirrorTopicBinding } from './mirror-host.js';
import { MirrorPartitionState as S, mirrorStateName, type MirrorPartitionStateValue } from './mirror-partition-state.js';

/** The operator request a desired-state change comes from. */
type DesiredChange = 'start' | 'stop' | 'pause' | 'resume' | 'unbind';

/** Carried by a `mirrorTopicState` op: what to check again inside the metadata write. */
export interface DesiredStateGuard {
  readonly change: DesiredChange;
  /** The mirror the request names (for an unbind, the mirror being deleted). */
  readonly mirrorName: string;
  /** The client's StateValidationOffset (-1: none). */
  readonly stateValidationOffset: number;
}

export interface Refusal {
  readonly code: number;
  readonly msg: string;
}

/** The new desired state, 'noop' when it already holds, or why the change is refused. */
type Decision = MirrorPartitionStateValue | 'noop' | Refusal;

/** What the rules read of a binding. */
type BindingView = Pick<MirrorTopicBinding, 'topicName' | 'mirrorName' | 'desiredState' | 'lastStateChangeOffset'>;

/** A topic changed after the offset the client read (spec §4.2 optimistic check). */
export function staleAgainst(b: BindingView | undefined, stateValidationOffset: number): Refusal | null {
  if (b === undefined || stateValidationOffset < 0 || b.lastStateChangeOffset <= stateValidationOffset) return null;
  return { code: ErrorCode.INVALID_CLUSTER_MIRROR_STATES, msg: `topic ${b.topicName} changed after offset ${stateValidationOffset}` };
}

export function decideStop(b: BindingView): Decision {
  return b.desiredState === S.STOPPED ? 'noop' : S.STOPPED;
}

export function decidePause(b: BindingView): Decision {
  if (b.desiredState === S.STOPPED) return { code: ErrorCode.MIRROR_TOPIC_BEING_STOPPED, msg: `topic ${b.topicName} is stopped` };
  if (b.desiredState === S.PAUSED) return 'noop';
  return S.PAUSED;
}

export function decideResume(b: BindingView): Decision {
  if (b.desiredState === S.MIRRORING) return 'noop';
  if (b.desiredState !== S.PAUSED) return { code: ErrorCode.MIRROR_TOPIC_NOT_PAUSED, msg: `topic ${b.topicName} is not paused` };
  return S.MIRRORING;
}

/** Start of `topicName` in `mirrorName`; `b` undefined when the topic is not bound (or does not exist yet). */
export function decideStart(mirrorName: string, b: BindingView | undefined): Decision {
  if (b === undefined) return S.MIRRORING;
  if (b.mirrorName !== mirrorName) {
    return b.desiredState === S.STOPPED ? S.MIRRORING : { code: ErrorCode.TOPIC_ALREADY_IN_CLUSTER_MIRROR, msg: `topic ${b.topicName} is mirrored by ${b.mirrorName}` };
  }
  if (b.desiredState === S.MIRRORING) return 'noop';
  if (b.desiredState !== S.STOPPED) return { code: ErrorCode.MIRROR_TOPIC_NOT_STOPPED, msg: `topic ${b.topicName} is ${mirrorStateName(b.desiredState)} in ${mirrorName}` };
  return S.MIRRORING;
}

/** DeleteClusterMirror unbinds only topics whose desired state is STOPPED (spec §4.3). */
function decideUnbind(b: BindingView): Decision {
  if (b.desiredState !== S.STOPPED) return { code: ErrorCode.CLUSTER_MIRROR_NOT_EMPTY, msg: `topic ${b.topicName} is ${mirrorStateName(b.desiredState)}; stop every topic first` };
  return S.UNKNOWN;
}

/**
 * The include/exclude lists after patterns move between them (spec §4.3): each `include`
 * pattern joins `mirror.topics.include` and leaves `mirror.topics.exclude`; each `exclude`
 * pattern leaves the include list and joins the exclude list (StartMirrorTopics' exclude
 * patterns, StopMirrorTopics' patterns).
 */
export function movePatterns(cfg: ReadonlyMap<string, string>, include: readonly string[], exclude: readonly string[]): { include: string[]; exclude: string[] } {
  let inc = [...new Set([...splitList(cfg.get('mirror.topics.include')), ...include])];
  let exc = splitList(cfg.get('mirror.topics.exclude') ?? mirrorConfigDefault('mirror.topics.exclude')).filter((p) => !include.includes(p));
  for (const p of exclude) {
    inc = inc.filter((x) => x !== p);
    if (!exc.includes(p)) exc = [...exc, p];
  }
  return { include: inc, exclude: exc };
}

/** What the metadata write's build step shows the rules: the image at the log's head. */
export interface MirrorImageView {
  /** The topic of an id, with its binding (undefined when unbound); undefined when no such topic. */
  topicById(topicId: string): { readonly name: string; readonly binding: BindingView | undefined } | undefined;
  mirrorExists(mirrorName: string): boolean;
  /** Ids of the topics bound to a mirror. */
  boundTopicIds(mirrorName: string): readonly string[];
  /**
   * A mirror's explicitly set configs. Without it a `mirrorTopicLists` op is applied to the
   * lists the requesting node read (its `base`).
   */
  mirrorConfig?(mirrorName: string): ReadonlyMap<string, string> | undefined;
}

/**
 * Checks `ops` against the image at the log's head, as part of the atomic write: every guarded
 * `mirrorTopicState` op is decided again from the binding as it now is. Returns the ops to write
 * (a change that now already holds is dropped, so it does not move the topic's
 * lastStateChangeOffset), or the refusal of the whole batch.
 */
export function validateMirrorOps(view: MirrorImageView, ops: readonly MirrorControllerOp[]): MirrorControllerOp[] | Refusal {
  const out: MirrorControllerOp[] = [];
  const created = new Set<string>();
  const configured = new Set<string>();
  const exists = (mirrorName: string): boolean => configured.has(mirrorName) || view.mirrorExists(mirrorName);
  for (const op of ops) {
    if (op.type === 'createTopic') created.add(op.topicId);
    if (op.type === 'mirrorConfig' && op.value !== null) configured.add(op.mirrorName);
    if (op.type === 'mirrorTopicLists') {
      if (!exists(op.mirrorName)) return { code: ErrorCode.UNKNOWN_CLUSTER_MIRROR, msg: `unknown cluster mirror ${op.mirrorName}` };
      // Moved on the lists as they are now: another node's change to them since is kept.
      const lists = movePatterns(view.mirrorConfig?.(op.mirrorName) ?? op.base, op.include, op.exclude);
      out.push({ type: 'mirrorConfig', mirrorName: op.mirrorName, name: 'mirror.topics.include', value: lists.include.join(',') });
      out.push({ type: 'mirrorConfig', mirrorName: op.mirrorName, name: 'mirror.topics.exclude', value: lists.exclude.join(',') });
      continue;
    }
    if (op.type === 'mirrorEmptiedOf') {
      if (!exists(op.mirrorName)) return { code: ErrorCode.UNKNOWN_CLUSTER_MIRROR, msg: `unknown cluster mirror ${op.mirrorName}` };
      const expected = new Set(op.topicIds);
      const extra = view.boundTopicIds(op.mirrorName).find((id) => !expected.has(id));
      if (extra !== undefined) {
        return { code: ErrorCode.INVALID_CLUSTER_MIRROR_STATES, msg: `topic ${view.topicById(extra)?.name ?? extra} was added to ${op.mirrorName} meanwhile` };
      }
      continue;
    }
    if (op.type !== 'mirrorTopicState' || op.guard === undefined) {
      out.push(op);
      continue;
    }
    const t = view.topicById(op.topicId);
    if (t === undefined && !created.has(op.topicId)) return { code: ErrorCode.UNKNOWN_TOPIC_ID, msg: `unknown topic id ${op.topicId}` };
    const b = t?.binding;
    const { change, mirrorName, stateValidationOffset } = op.guard;
    if (!exists(mirrorName)) return { code: ErrorCode.UNKNOWN_CLUSTER_MIRROR, msg: `unknown cluster mirror ${mirrorName}` };
    const stale = staleAgainst(b, stateValidationOffset);
    if (stale !== null) return stale;
    let d: Decision;
    if (change === 'start') d = decideStart(mirrorName, b);
    else if (b === undefined || b.mirrorName !== mirrorName) {
      return { code: ErrorCode.TOPIC_NOT_IN_CLUSTER_MIRROR, msg: `topic ${t?.name ?? op.topicId} is not in this mirror any more` };
    } else if (change === 'stop') d = decideStop(b);
    else if (change === 'pause') d = decidePause(b);
    else if (change === 'resume') d = decideResume(b);
    else d = decideUnbind(b);
    if (typeof d === 'object') return d;
    if (d === 'noop') continue;
    if (d !== op.desiredState) return { code: ErrorCode.INVALID_CLUSTER_MIRROR_STATES, msg: `topic ${t?.name ?? op.topicId} changed meanwhile` };
    out.push(op);
  }
  return out;
}
