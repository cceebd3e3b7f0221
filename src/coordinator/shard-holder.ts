/**
 * One shard of a CoordinatorRuntime as the runtime holds it: the shard, its log, whether it is
 * loaded or unloaded, the writes waiting for their batch, reads waiting on a batch, and timers.
 */
import type { CancelTimer } from '../common/time.js';
import type { CoordinatorLog } from './coordinator-host.js';
import type { CoordinatorShard, WriteOp, WriteResult } from './coordinator-shard.js';

/** A shard timer: the write op it runs, when it is due (on the timers' timeline) and its cancel. */
export interface ShardTimer<S> {
  readonly op: WriteOp<S, unknown>;
  readonly dueAt: number;
  readonly cancel: CancelTimer;
}

/** A write waiting for its turn, and how to answer it. */
interface QueuedWrite<S> {
  readonly op: WriteOp<S, unknown>;
  readonly deliver: (v: unknown) => void;
  readonly fail: (e: unknown) => void;
}

/** A write applied to the shard whose records are part of the batch being appended. */
export interface AppliedWrite<S> {
  readonly write: QueuedWrite<S>;
  readonly out: WriteResult<unknown>;
}

export class ShardHolder<S extends CoordinatorShard> {
  shard!: S;
  log!: CoordinatorLog;
  loaded = false;
  closed = false;
  /** Writes not yet applied, in arrival order. */
  readonly queue: QueuedWrite<S>[] = [];
  /** A batch is being applied or appended: the shard holds state not yet committed. */
  busy = false;
  /** Reads that arrived while busy; they run once the batch is committed or reverted. */
  readonly reads: (() => void)[] = [];
  /** Resolved when the queue runs dry. */
  drained: Promise<void> = Promise.resolve();
  readonly timers = new Map<string, ShardTimer<S>>();
  /** No timer is due before this (a lower bound: a timer moved later leaves it early). */
  timersDueFrom = Infinity;
  loading: Promise<void> | null = null;
  constructor(readonly partition: number) {}
}
