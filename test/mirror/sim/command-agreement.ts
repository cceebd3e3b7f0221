/**
 * Operator commands in the simulation, and the check that a command answers the same whichever
 * node receives it. The check runs only when the world is quiet (faults healed, nothing in
 * flight but timers): the command goes through one node, and when its answer changed nothing (a
 * refusal, or a success that was already true), the same command goes through every other live
 * node in turn, each answer awaited before the next; each must give the same error codes and
 * change nothing either. A command that changes something is not compared (through another node
 * it would meet the changed world); the world is let go quiet again before the next one.
 */
import type { Scheduler } from './scheduler.js';
import { Tape, settle } from './scheduler.js';
import { MIRROR, type SimNode, type World } from './world.js';

export const TOPIC = 't';

export type Command = 'start' | 'stop' | 'pause' | 'resume' | 'delete';

/** Sends `kind` for TOPIC (or, for delete, the mirror) through `node`; the answer's error codes. */
export async function issue(world: World, kind: Command, node: SimNode): Promise<{ codes: string; text: string }> {
  const c = node.control;
  if (kind === 'delete') {
    const r = await c.deleteClusterMirror(MIRROR, -1);
    return { codes: String(r.errorCode), text: `${r.errorCode}${r.errorMessage === null ? '' : ` ${r.errorMessage}`}` };
  }
  const src = world.source.get(TOPIC)!;
  const r =
    kind === 'start'
      ? await c.startMirrorTopics(MIRROR, [{ topicName: TOPIC, topicId: src.id, numPartitions: src.partitions.length }], [], [], -1)
      : kind === 'stop'
        ? await c.stopMirrorTopics(MIRROR, [TOPIC], [], -1)
        : kind === 'pause'
          ? await c.pauseMirrorTopics(MIRROR, [TOPIC], -1)
          : await c.resumeMirrorTopics(MIRROR, [TOPIC], -1);
  return {
    codes: [r.errorCode, ...r.topics.map((t) => t.errorCode)].join('/'),
    text: r.topics.map((t) => `${t.errorCode}${t.errorMessage === null ? '' : ` ${t.errorMessage}`}`).join(','),
  };
}

/** What an operator command can change: the mirror, the topic, its binding. */
function fingerprint(world: World): string {
  const b = world.binding(TOPIC);
  return JSON.stringify([world.mirrors.has(MIRROR), world.topics.get(TOPIC)?.id ?? null, b === undefined ? null : [b.mirrorName, b.desiredState, b.lastStateChangeOffset]]);
}

/** Runs the world in order (pending steps first, then timers) until `done`; the steps taken. */
async function runUntil(sched: Scheduler, done: () => boolean, limit = 20_000): Promise<number> {
  let n = 0;
  while (!done() && n < limit) {
    n++;
    if (sched.pendingCount > 0) sched.completeOne(new Tape([0]));
    else if (!sched.fireNextTimer()) break;
    await settle();
  }
  return n;
}

export interface AgreementHooks {
  /** Lets the world go quiet after a command changed it; the steps taken. */
  readonly quiesce: () => Promise<number>;
  /** The quiet-state invariants, checked after such a command. */
  readonly checkQuiet: () => void;
  /** Records a step of the run (what a failing run prints). */
  readonly step: (s: string) => void;
}

/**
 * Sends each of `kinds` in turn, the n-th through the n-th live node (round robin), and compares
 * as described above. Stops at the first violation. The steps taken.
 */
export async function checkAgreement(world: World, kinds: readonly Command[], hooks: AgreementHooks): Promise<number> {
  let steps = 0;
  const ask = async (kind: Command, node: SimNode): Promise<{ codes: string; text: string } | null> => {
    let answer: { codes: string; text: string } | null = null;
    let threw: unknown = null;
    let settled = false;
    issue(world, kind, node).then(
      (a) => {
        answer = a;
        settled = true;
      },
      (e: unknown) => {
        threw = e;
        settled = true;
      },
    );
    steps += await runUntil(world.sched, () => settled);
    if (threw !== null) return { codes: 'threw', text: (threw as Error).message };
    return answer;
  };
  for (const [i, kind] of kinds.entries()) {
    const up = world.up();
    const first = up[i % up.length]!;
    const before = fingerprint(world);
    const a = await ask(kind, first);
    hooks.step(`quiet; ${kind} ${TOPIC} through node ${first.id} answered ${a?.text ?? 'nothing'}`);
    if (a === null) {
      world.violations.push(`quiet: ${kind} ${TOPIC} through node ${first.id} never answered`);
      return steps;
    }
    if (fingerprint(world) !== before) {
      if (i < kinds.length - 1) {
        steps += await hooks.quiesce();
        hooks.checkQuiet();
        if (world.violations.length > 0) return steps;
      }
      continue;
    }
    for (const other of up) {
      if (other === first) continue;
      const b = await ask(kind, other);
      const changed = fingerprint(world) !== before;
      hooks.step(`quiet; ${kind} ${TOPIC} through node ${other.id} answered ${b?.text ?? 'nothing'}`);
      if (b === null || b.codes !== a.codes || changed) {
        world.violations.push(
          `quiet: ${kind} ${TOPIC} answered ${a.codes} through node ${first.id}, changing nothing, and ${b === null ? 'nothing' : b.codes} through node ${other.id}${changed ? ', which changed the metadata' : ''}`,
        );
        return steps;
      }
    }
  }
  return steps;
}
