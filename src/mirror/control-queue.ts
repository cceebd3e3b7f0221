/**
 * The one queue every metadata-changing mirroring call goes through (create, start, stop, pause,
 * resume, delete, CLUSTER_MIRROR config changes), so a call's validation and the controller write
 * it depends on are never interleaved with another call's (the receiving broker's half of the
 * spec §4.2 pattern; the controller's StateValidationOffset check is the other half).
 */
import type { TopLevelResult } from './control-results.js';
import type { MirrorControllerOp, MirrorHost } from './mirror-host.js';

/** How long a write's answer waits for the local reconcile it triggers. */
const AFTER_WRITE_WAIT_MS = 1000;

export class ControlQueue {
  private queue: Promise<unknown> = Promise.resolve();

  /** `afterWrite` runs after every successful write: the manager reconciles with the new image. */
  constructor(
    private readonly host: MirrorHost,
    private readonly afterWrite: () => Promise<void>,
  ) {}

  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async write(ops: readonly MirrorControllerOp[]): Promise<TopLevelResult> {
    const r = await this.writeOnly(ops);
    if (r.errorCode === 0 && ops.length > 0) await this.settle();
    return r;
  }

  /** The controller write alone; `settle()` once after a request's writes. */
  async writeOnly(ops: readonly MirrorControllerOp[]): Promise<TopLevelResult> {
    if (ops.length === 0) return { errorCode: 0, errorMessage: null };
    const r = await this.host.controllerWrite(ops);
    return { errorCode: r.errorCode, errorMessage: r.errorMessage ?? null };
  }

  /**
   * The local partitions start their transitions before the answer (a describe right after
   * sees them), but the answer does not wait for their state writes: on a cluster those go to
   * coordinators on other nodes, and one that is stopped or moving must not hold up an
   * operator's stop. The controller write is what the request asked for, and it is done.
   */
  async settle(): Promise<void> {
    let cancel: () => void = () => undefined;
    const bounded = new Promise<void>((resolve) => {
      cancel = this.host.timers.schedule(AFTER_WRITE_WAIT_MS, resolve);
    });
    await Promise.race([this.afterWrite(), bounded]);
    cancel();
  }
}
