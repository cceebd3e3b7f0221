/**
 * What the active controller does beyond serving writes: when brokers come or go (or ask for a
 * controlled shutdown) it reconciles every partition's leader and ISR; with
 * `auto.leader.rebalance.enable` it moves leadership back to preferred replicas every
 * `leader.imbalance.check.interval.seconds` (Kafka's QuorumController periodic task). Only the
 * active controller acts, and its writes are fenced by its election key, so a deposed one cannot.
 */
import type { Logger } from '../common/logger.js';
import type { Controller } from './controller.js';
import type { TopicImage } from './metadata-image.js';
import { electLeaders, reconcileLeadership } from './partition-ops.js';

export interface ActiveControllerOptions {
  readonly uncleanAllowed: (topic: TopicImage) => boolean;
  readonly autoLeaderRebalance: boolean;
  readonly imbalanceCheckIntervalMs: number;
  readonly log: Logger;
}

export class ActiveControllerDuties {
  private running = false;
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly controller: Controller,
    private readonly opts: ActiveControllerOptions,
  ) {}

  start(): void {
    const cluster = this.controller.cluster;
    this.unsubscribe.push(
      cluster.on('brokers', () => this.schedule()),
      cluster.on('controller', () => this.schedule()),
    );
    if (this.opts.autoLeaderRebalance) this.timer = setInterval(() => void this.rebalance(), this.opts.imbalanceCheckIntervalMs);
    this.schedule();
  }

  /** One reconcile at a time; changes during one run trigger one more. */
  private schedule(): void {
    if (!this.controller.cluster.isActiveController) return;
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = true;
    void (async () => {
      try {
        do {
          this.dirty = false;
          const r = await reconcileLeadership(this.controller, this.opts.uncleanAllowed);
          if (r.errorCode !== 0) this.opts.log.warn('leadership reconcile failed', { errorCode: r.errorCode, err: r.errorMessage ?? '' });
        } while (this.dirty && this.controller.cluster.isActiveController);
      } finally {
        this.running = false;
      }
    })();
  }

  private async rebalance(): Promise<void> {
    if (!this.controller.cluster.isActiveController) return;
    const r = await electLeaders(this.controller, 0, null, true);
    if (Array.isArray(r) && r.length > 0) this.opts.log.info('preferred leaders elected', { partitions: r.length });
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    for (const u of this.unsubscribe) u();
  }
}
