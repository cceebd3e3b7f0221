/**
 * Producer ids for InitProducerId: taken from blocks the controller persists in the metadata
 * log, so an id is never handed out twice, even across restarts (unused ids of a block are
 * skipped after a restart, as in Kafka).
 */
import type { Controller } from './controller.js';

export class ProducerIdManager {
  private next = 0;
  private last = -1;
  private pending: Promise<void> | null = null;

  constructor(private readonly controller: Controller) {}

  async nextId(): Promise<number> {
    while (this.next > this.last) {
      this.pending ??= this.controller.allocateProducerIdBlock().then(
        (b) => {
          this.next = b.first;
          this.last = b.last;
          this.pending = null;
        },
        (err: unknown) => {
          this.pending = null;
          throw err;
        },
      );
      await this.pending;
    }
    return this.next++;
  }
}
