/**
 * STOPPING's last group offset sync (spec §10.2), gathered: each stopping partition asks for one
 * of its topic, and a stop of a thousand partitions would ask the source a thousand times for the
 * same groups. The topics asked for while a sync of a mirror runs are synced together by the next
 * one; every caller resolves when the sync that covers its topics has ended (failures are the
 * sync's own to report, as they are for each partition's).
 *
 * Concurrency: one sync per mirror runtime at a time; requests may arrive at any moment.
 */
import type { MirrorRuntime } from './mirror-runtime.js';

interface Round {
  readonly topics: Set<string>;
  readonly waiters: (() => void)[];
}

export class GatheredGroupSync {
  private readonly pending = new Map<MirrorRuntime, Round>();
  private readonly running = new Set<MirrorRuntime>();

  /** `defer` runs the gathering turn (setImmediate, or a simulated scheduler's step). */
  constructor(
    private readonly sync: (rt: MirrorRuntime, topics: ReadonlySet<string>) => Promise<void>,
    private readonly defer: (fn: () => void) => void = (fn) => void setImmediate(fn),
  ) {}

  /** Resolves once a sync of `topics` that started after this call has ended. */
  syncTopics(rt: MirrorRuntime, topics: ReadonlySet<string>): Promise<void> {
    return new Promise<void>((resolve) => {
      let round = this.pending.get(rt);
      if (round === undefined) this.pending.set(rt, (round = { topics: new Set(), waiters: [] }));
      for (const t of topics) round.topics.add(t);
      round.waiters.push(resolve);
      if (!this.running.has(rt)) {
        this.running.add(rt);
        this.defer(() => void this.drain(rt));
      }
    });
  }

  private async drain(rt: MirrorRuntime): Promise<void> {
    for (;;) {
      const round = this.pending.get(rt);
      if (round === undefined) break;
      this.pending.delete(rt);
      await this.sync(rt, round.topics).catch(() => undefined);
      for (const w of round.waiters) w();
    }
    this.running.delete(rt);
  }
}
