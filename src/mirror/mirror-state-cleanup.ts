/**
 * Tombstones of a deleted mirror's `__mirror_state` records (KIP-1279 spec §3.2, the reference's
 * retryPendingTombstoneWrites). The records of a mirror are spread over every shard of
 * `__mirror_state`, and each shard is written only by its coordinator, so every node does this
 * for the shards it serves: when its image shows a mirror gone, and again on each refresh, so
 * that a write that failed is retried and a shard that moved here since is cleaned too.
 *
 * Only mirrors this node saw deleted are swept (a record of a mirror whose creation the image
 * has not shown yet is not taken for stale). A mirror created again under the same name leaves
 * the set.
 *
 * Concurrency contract: event loop only; one sweep at a time.
 */
import type { MirrorCoordinator } from './mirror-coordinator.js';
import type { MirrorHost } from './mirror-host.js';

export class MirrorStateCleanup {
  private known: Set<string>;
  private readonly deleted = new Set<string>();
  private sweeping: Promise<void> | null = null;
  private again = false;
  private cancelTimer: (() => void) | null = null;
  private unsubscribe: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly host: MirrorHost,
    private readonly coordinator: MirrorCoordinator,
    private readonly refreshIntervalMs: number,
    private readonly log: (msg: string) => void = () => undefined,
  ) {
    this.known = new Set(host.mirrorConfigs().keys());
  }

  start(): void {
    this.unsubscribe = this.host.onMetadataChange(() => this.onImage());
    this.schedule();
  }

  /** Mirrors this node saw deleted and still sweeps for. */
  pending(): readonly string[] {
    return [...this.deleted];
  }

  /** Tombstones the served shards' records of every mirror seen deleted; resolves when done. */
  sweep(): Promise<void> {
    if (this.sweeping !== null) {
      this.again = true;
      return this.sweeping;
    }
    const run = (async () => {
      do {
        this.again = false;
        for (const name of [...this.deleted]) {
          if (this.closed) return;
          try {
            const n = await this.coordinator.tombstoneMirror(name);
            if (n > 0) this.log(`mirror ${name}: tombstoned ${n} __mirror_state keys of the deleted mirror`);
          } catch (err) {
            this.log(`mirror ${name}: tombstoning its __mirror_state records failed, retrying on the next refresh: ${(err as Error).message}`);
          }
        }
      } while (this.again && !this.closed);
    })().finally(() => {
      this.sweeping = null;
    });
    this.sweeping = run;
    return run;
  }

  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    this.cancelTimer?.();
  }

  private onImage(): void {
    const now = new Set(this.host.mirrorConfigs().keys());
    let gone = false;
    for (const name of this.known) {
      if (!now.has(name)) {
        this.deleted.add(name);
        gone = true;
      }
    }
    for (const name of now) this.deleted.delete(name);
    this.known = now;
    if (gone) void this.sweep();
  }

  private schedule(): void {
    if (this.closed) return;
    this.cancelTimer = this.host.timers.schedule(this.refreshIntervalMs, () => {
      void (this.deleted.size > 0 ? this.sweep() : Promise.resolve()).finally(() => this.schedule());
    });
  }
}
