/**
 * One simulated run of a mirror over three destination nodes, driven by a tape of decisions (see
 * ./scheduler.ts): at each step the tape picks a pending step to complete, a timer to fire, or a
 * fault or operator command; then the faults are healed and the commands stop, and the run goes
 * on until it is quiet; then every topic is stopped, and the run goes on until quiet again.
 *
 * Invariants, checked as the run goes and when it is quiet:
 * - a client write is accepted only when the partition's persisted state is STOPPED and its
 *   leader's state machine says STOPPED;
 * - quiet, every partition is in its desired state (FAILED only when the source topic is gone,
 *   and then a stop gets it out: the final stop checks that);
 * - quiet and stopped, the persisted last mirrored epoch is the epoch of the last batch mirrored;
 * - quiet and stopped, a source transaction the mirror copied reads as committed or aborted as it
 *   does on the source when its marker was mirrored, and as aborted when it was open at the stop
 *   (./transactions.ts);
 * - after the final stop, the old source failing back (the real LOG_TRUNCATION, then the
 *   fetcher's epoch rule) keeps only a byte prefix of the stopped topic's log, then converges
 *   with it (./failback.ts);
 * - what the mirror appended is the source's batches, byte for byte, at the source's offsets; a
 *   partition quiet in MIRRORING holds exactly the source's log;
 * - quiet, a command that changes nothing through one node answers the same through every other
 *   (./command-agreement.ts).
 */
import { ErrorCode } from '../../../src/protocol/generated/errors.js';
import { MirrorPartitionState as S, mirrorStateName } from '../../../src/mirror/mirror-partition-state.js';
import { buildRecordBatch } from '../../../src/protocol/records.js';
import { checkStoppedTransactions } from './transactions.js';
import { failBack } from './failback.js';
import { TOPIC, checkAgreement, issue, type Command } from './command-agreement.js';
import { Scheduler, Tape, settle } from './scheduler.js';
import { MIRROR, SimNode, World, realValidator, type OpsValidator } from './world.js';

const NODE_IDS = [1, 2, 3];

export interface SimResult {
  readonly violations: string[];
  /** The steps the tape chose, in order (what a failing run prints). */
  readonly steps: string[];
  readonly stepCount: number;
}

export interface SimOptions {
  /** Active steps (faults and commands happen during these). */
  readonly activeSteps?: number;
  /** The metadata write's build step (default the real one; null: none). */
  readonly validate?: OpsValidator | null;
  /** Keep the world's log lines (for printing a failing run). */
  readonly keepLines?: boolean;
}

export async function runSimulation(tapeValues: readonly number[], opts: SimOptions = {}): Promise<SimResult & { lines: string[] }> {
  const sched = new Scheduler();
  const world = new World(sched, NODE_IDS, opts.validate === undefined ? realValidator : opts.validate);
  const tape = new Tape(tapeValues);
  const steps: string[] = [];
  /** The steps the tape decided (after its end, everything completes in order). */
  const step = (s: string): void => {
    if (!tape.exhausted) steps.push(`[${sched.now}] ${s}`);
  };
  for (const id of NODE_IDS) world.nodes.set(id, new SimNode(world, id));
  for (const n of world.nodes.values()) n.start();
  world.sourceTopic(TOPIC);
  for (let i = 0; i < 3; i++) world.produceToSource(TOPIC, 0);
  world.produceToSource(TOPIC, 1);
  // A committed transaction and an open one on each partition.
  for (let p = 0; p < 2; p++) {
    world.produceToSource(TOPIC, p, 'txn', 0);
    world.produceToSource(TOPIC, p, 'commit', 0);
    world.produceToSource(TOPIC, p, 'txn', 0);
  }
  await settle();

  const commands: Promise<void>[] = [];
  const command = (kind: Command, node: SimNode): void => {
    step(`${kind} ${TOPIC} through node ${node.id}`);
    commands.push(
      issue(world, kind, node).then(
        (r) => world.say(`${kind} through ${node.id} answered ${r.text}`),
        (err: unknown) => world.say(`${kind} through ${node.id} threw ${(err as Error).message}`),
      ),
    );
  };

  /** A client's produce to a partition through its leader, checked against what is persisted. */
  const produce = (p: number): void => {
    const t = world.topics.get(TOPIC);
    if (t === undefined) return;
    const leader = world.nodes.get(t.leaders[p] ?? -1);
    if (leader === undefined || !leader.leadsNow(TOPIC, p)) return;
    if (!leader.manager.produceGuard.isProduceAllowed(TOPIC, p)) return;
    const persisted = world.persistedOf(t.id, p).state;
    const key = { mirrorName: MIRROR, topicId: t.id, topicName: TOPIC, partition: p };
    const machine = leader.manager.machine.state(key);
    const bound = world.binding(TOPIC) !== undefined;
    if (bound && (persisted !== S.STOPPED || machine !== S.STOPPED)) {
      world.violations.push(`a client write to ${TOPIC}-${p} was accepted by node ${leader.id} while its persisted state is ${persisted === null ? 'none' : mirrorStateName(persisted)} and its leader's is ${mirrorStateName(machine)}`);
    }
    step(`client produce ${TOPIC}-${p} accepted by node ${leader.id}`);
    world.log(TOPIC, p).appendAsLeader(buildRecordBatch({ now: 2000, records: [{ value: Buffer.from('client') }] }), t.epochs[p] ?? 0);
  };

  const activeSteps = opts.activeSteps ?? 250;
  let stepCount = 0;
  for (let i = 0; i < activeSteps; i++) {
    stepCount++;
    const kind = tape.choose(21);
    if (kind < 11) {
      const label = sched.completeOne(tape);
      if (label === null) sched.fireNextTimer();
      else step(`complete: ${label}`);
    } else if (kind < 13) {
      sched.fireNextTimer();
    } else if (kind < 16) {
      const up = world.up();
      const node = up[tape.choose(up.length)];
      if (node !== undefined) command((['start', 'stop', 'pause', 'resume'] as const)[tape.choose(4)]!, node);
    } else if (kind === 16) {
      produce(tape.choose(2));
    } else if (kind === 17) {
      const p = tape.choose(2);
      const what = tape.choose(4);
      if (what === 0) {
        step(`source: leader epoch of ${TOPIC}-${p} bumped`);
        const sp = world.source.get(TOPIC)?.partitions[p];
        if (sp !== undefined) sp.epoch++;
      } else if (what === 1) {
        const again = tape.choose(2) === 1;
        step(`source: ${TOPIC} deleted${again ? ' and created again' : ''}`);
        world.deleteSourceTopic(TOPIC, again);
      } else if (what === 2) {
        world.sourceReachable = !world.sourceReachable;
        step(`source: ${world.sourceReachable ? 'reachable again' : 'unreachable'}`);
      } else {
        const what = (['plain', 'txn', 'txn', 'commit', 'abort'] as const)[tape.choose(5)]!;
        const said = world.produceToSource(TOPIC, p, what, tape.choose(3));
        if (said !== null) step(`source: ${said} to ${TOPIC}-${p}`);
      }
    } else if (kind === 18) {
      const down = [...world.nodes.values()].filter((n) => !n.up);
      const up = world.up();
      if (down.length > 0 && tape.choose(2) === 0) {
        const n = down[tape.choose(down.length)]!;
        step(`node ${n.id} restarts`);
        restart(world, n.id);
      } else if (up.length > 1) {
        const n = up[tape.choose(up.length)]!;
        step(`node ${n.id} crashes`);
        crash(world, n);
      }
    } else if (kind === 20) {
      const up = world.up();
      const n = up[tape.choose(up.length)];
      if (n !== undefined) {
        step(`node ${n.id} ${n.metadataStalled ? 'hears from the controller again' : 'stops hearing from the controller'}`);
        n.stallMetadata(!n.metadataStalled);
      }
    } else {
      const up = world.up();
      const to = up[tape.choose(up.length)];
      if (to !== undefined) {
        if (tape.choose(2) === 0) {
          const p = tape.choose(2);
          if (world.topics.has(TOPIC)) {
            step(`leader of ${TOPIC}-${p} moves to node ${to.id}`);
            world.moveLeader(TOPIC, p, to.id);
          }
        } else {
          const p = tape.choose(3);
          step(`leader of __mirror_state-${p} moves to node ${to.id}`);
          world.moveStateLeader(p, to.id);
        }
      }
    }
    await settle();
  }

  // Heal: every node up, the source reachable; no more commands or faults.
  steps.push(`[${sched.now}] ${tape.exhausted ? 'the tape ends: every pending step completes in order; ' : ''}faults healed, commands stop`);
  for (const n of [...world.nodes.values()]) if (!n.up) restart(world, n.id);
  for (const n of world.nodes.values()) n.stallMetadata(false);
  world.sourceReachable = true;
  stepCount += await quiesce(world);
  checkQuiet(world, false);
  const hooks = (stopped: boolean) => ({
    quiesce: () => quiesce(world),
    checkQuiet: () => checkQuiet(world, stopped),
    step: (s: string) => steps.push(`[${sched.now}] ${s}`),
  });
  // Every command answers the same through every node (a start, a pause, a resume below may
  // change the topic: the world goes quiet again and is checked before the next).
  if (world.violations.length === 0) stepCount += await checkAgreement(world, ['start', 'resume', 'pause'], hooks(false));

  // Every partition must come out of whatever it is in with a stop.
  if (world.binding(TOPIC) !== undefined && world.violations.length === 0) {
    const node = world.up()[0]!;
    steps.push(`[${sched.now}] quiet; stop ${TOPIC} through node ${node.id}`);
    command('stop', node);
    stepCount += await quiesce(world);
    checkQuiet(world, true);
    for (let p = 0; p < 2; p++) produce(p);
    // The old source fails back onto the stopped topic and converges with it.
    const t = world.topics.get(TOPIC);
    const src = t === undefined ? undefined : world.sourceById.get(t.id);
    for (let p = 0; t !== undefined && src !== undefined && world.violations.length === 0 && p < t.leaders.length; p++) {
      const persisted = world.persistedOf(t.id, p);
      if (persisted.state !== S.STOPPED) continue;
      steps.push(`[${sched.now}] the old source of ${TOPIC}-${p} fails back (last mirrored epoch ${persisted.lme})`);
      world.violations.push(...(await failBack(`${TOPIC}-${p}`, t.id, p, src.partitions[p]!.batches, world.log(TOPIC, p), persisted.lme)));
    }
    // Stopped: a stop again, a pause and a resume are refused or already true through every
    // node; the delete is the last change.
    if (world.violations.length === 0) stepCount += await checkAgreement(world, ['stop', 'pause', 'resume', 'delete'], hooks(true));
  }
  // Commands whose node crashed never answer; the others have.
  void Promise.allSettled(commands);
  for (const n of world.nodes.values()) if (n.up) n.crash();
  return { violations: world.violations, steps, stepCount, lines: opts.keepLines === true ? world.lines : [] };
}

function crash(world: World, n: SimNode): void {
  n.crash();
  // The controller fences it: its partitions and shards go to live nodes.
  const others = world.up().map((x) => x.id);
  const t = world.topics.get(TOPIC);
  if (t !== undefined) t.leaders.forEach((l, p) => l === n.id && world.moveLeader(TOPIC, p, others[p % others.length]!));
  world.stateLeaders.forEach((l, p) => l === n.id && world.moveStateLeader(p, others[p % others.length]!));
}

function restart(world: World, id: number): void {
  const n = new SimNode(world, id);
  world.nodes.set(id, n);
  n.start();
  world.notifyAll();
  for (const x of world.up()) x.leadershipChangedLater();
}

/** Completes everything in order and lets 90 s of timers fire; the steps it took. */
async function quiesce(world: World): Promise<number> {
  const sched = world.sched;
  const until = sched.now + 90_000;
  let n = 0;
  while (n < 50_000) {
    n++;
    if (sched.pendingCount > 0) sched.completeOne(new Tape([0]));
    else if (sched.nextTimerAt <= until) sched.fireNextTimer();
    else break;
    await settle();
  }
  return n;
}

function checkQuiet(world: World, stopped: boolean): void {
  const b = world.binding(TOPIC);
  const t = world.topics.get(TOPIC);
  if (b === undefined || t === undefined) return;
  const src = world.source.get(TOPIC);
  for (let p = 0; p < t.leaders.length; p++) {
    const where = `${TOPIC}-${p}`;
    const leader = world.nodes.get(t.leaders[p]!)!;
    const key = { mirrorName: MIRROR, topicId: t.id, topicName: TOPIC, partition: p };
    const machine = leader.manager.machine.state(key);
    const persisted = world.persistedOf(t.id, p);
    const desired = b.desiredState;
    const name = (s: number | null): string => (s === null ? 'none' : mirrorStateName(s));
    const ok = persisted.state === desired && machine === desired;
    // A non-retryable FAILED (source topic gone or recreated) stays while not stopped: the final
    // stop checks that it has a way out. A retryable one must have recovered once faults healed.
    const failedForNow = !stopped && persisted.state === S.FAILED && persisted.retryAttempt < 0 && machine === S.FAILED && desired !== S.STOPPED;
    // Paused before its leader persisted anything, or paused while a start had not reached its
    // STOPPED partition yet (§7.3 leaves both): nothing fetched, read-only; a resume or a stop
    // takes it on.
    const pausedBeforeStart = desired === S.PAUSED && ((persisted.state === null && machine === S.UNKNOWN) || (persisted.state === S.STOPPED && machine === S.STOPPED));
    if (!ok && !failedForNow && !pausedBeforeStart) {
      world.violations.push(`quiet: ${where} is ${name(persisted.state)} (leader node ${leader.id} says ${name(machine)}) while desired ${name(desired)}${stopped ? ' after the final stop' : ''}`);
      continue;
    }
    const log = world.log(TOPIC, p);
    const firstLocal = log.batches.findIndex((x) => x.origin === 'local');
    const mirrored = firstLocal < 0 ? log.batches : log.batches.slice(0, firstLocal);
    const sourceLog = src !== undefined && src.id === t.id ? src.partitions[p]!.batches : null;
    if (sourceLog !== null) {
      for (const x of mirrored) {
        if (x.origin !== 'source' || !x.bytes.equals(sourceLog[x.baseOffset] ?? Buffer.alloc(0))) {
          world.violations.push(`quiet: ${where} offset ${x.baseOffset} is not the source's batch`);
          break;
        }
      }
      if (desired === S.MIRRORING && persisted.state === S.MIRRORING && (firstLocal >= 0 || log.logEndOffset !== sourceLog.length)) {
        world.violations.push(`quiet: ${where} MIRRORING holds ${log.logEndOffset} offsets (${firstLocal >= 0 ? 'with local writes' : 'none local'}), the source ${sourceLog.length}`);
      }
    }
    if (persisted.state === S.STOPPED && machine === S.STOPPED) {
      const mirroredEnd = firstLocal < 0 ? log.logEndOffset : log.batches[firstLocal]!.baseOffset;
      for (const v of checkStoppedTransactions(log.batches, world.sourceById.get(t.id)?.partitions[p]?.views ?? null, mirroredEnd)) world.violations.push(`quiet: ${where}: ${v}`);
    }
    if (stopped && persisted.state === S.STOPPED) {
      const lastMirrored = [...log.batches].reverse().find((x) => x.origin === 'source');
      if (lastMirrored !== undefined && persisted.lme !== lastMirrored.epoch) {
        world.violations.push(`quiet: ${where} STOPPED with last mirrored epoch ${persisted.lme}, its last mirrored batch has epoch ${lastMirrored.epoch}`);
      }
      if (!leader.manager.produceGuard.isProduceAllowed(TOPIC, p)) world.violations.push(`quiet: ${where} is STOPPED but node ${leader.id} refuses client writes (${ErrorCode.READ_ONLY_TOPIC})`);
    }
  }
}
