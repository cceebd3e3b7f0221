/**
 * The one queue every metadata-changing mirroring call goes through (create, start, stop, pause,
 * resume, delete, CLUSTER_MIRROR config changes), so a call's validation and the controller write
 * it depends on are never interleaved with another call's (the receiving broker's half of the
 * spec §4.2 pattern; the controller's StateValidationOffset check is the other half).
 */
import type { TopLevelResult } from './control-results.js';
import type { MirrorControllerOp, MirrorHost } from './mirror-host.js';

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
    if (ops.length === 0) return { errorCode: 0, errorMessage: null };
    const r = await this.host.controllerWrite(ops);
    if (r.errorCode === 0) await this.afterWrite();
    return { errorCode: r.errorCode, errorMessage: r.errorMessage ?? null };
  }
}
