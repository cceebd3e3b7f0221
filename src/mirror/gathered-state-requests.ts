/**
 * ReadMirrorStates and WriteMirrorStates of many partitions gathered into few requests. A stop of
 * thousands of partitions has every partition leader read and write its state at its mirror
 * coordinator three or four times, and most coordinators are on another node: one request per
 * partition and step was thousands of requests per node, each its own frame, handler run and
 * answer, queued behind each other on the one inter-broker connection.
 *
 * Calls to one coordinator node (for one mirror) that arrive while a request to it is out, or
 * within the turn after the first, go out together as the next request, as group commit gathers
 * fsyncs; each call settles with its own partition's answer. A partition's calls keep their
 * order: a request carries at most one call per partition, a later one waits for the next
 * request, which is sent only once the one before it has been answered.
 *
 * Concurrency: event loop only; at most one request per target is out at a time.
 */

/** One call's answer within a gathered request: its value, or the error its partition got. */
export type GatheredOutcome<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

interface Call<E, R> {
  readonly entry: E;
  readonly partitionKey: string;
  resolve(v: R): void;
  reject(e: unknown): void;
}

interface Target<E, R> {
  queue: Call<E, R>[];
  /** A request is out, or a turn to send one is scheduled. */
  busy: boolean;
  send: (entries: E[]) => Promise<readonly GatheredOutcome<R>[]>;
}

/** Calls per request at most: a request stays far below a frame's size limit. */
const CALLS_PER_REQUEST = 1000;

export class StateRequestGatherer<E, R> {
  private readonly targets = new Map<string, Target<E, R>>();

  /** `defer` runs the gathering turn (setImmediate, or a simulated scheduler's step). */
  constructor(private readonly defer: (fn: () => void) => void) {}

  /**
   * Queues `entry` for `target` (a node and mirror); `send` sends a request of such entries and
   * answers each in order. Resolves or rejects with this entry's own outcome; a request that
   * fails as a whole rejects every call it carried with that failure.
   */
  submit(target: string, partitionKey: string, entry: E, send: (entries: E[]) => Promise<readonly GatheredOutcome<R>[]>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let t = this.targets.get(target);
      if (t === undefined) this.targets.set(target, (t = { queue: [], busy: false, send }));
      // The node's newest endpoint.
      t.send = send;
      t.queue.push({ entry, partitionKey, resolve, reject });
      if (!t.busy) this.schedule(target, t);
    });
  }

  private schedule(target: string, t: Target<E, R>): void {
    t.busy = true;
    this.defer(() => void this.sendNext(target, t));
  }

  private async sendNext(target: string, t: Target<E, R>): Promise<void> {
    const calls: Call<E, R>[] = [];
    const partitions = new Set<string>();
    let i = 0;
    for (; i < t.queue.length && calls.length < CALLS_PER_REQUEST; i++) {
      const c = t.queue[i] as Call<E, R>;
      // A second call of a partition, and every call after it, waits for the next request.
      if (partitions.has(c.partitionKey)) break;
      partitions.add(c.partitionKey);
      calls.push(c);
    }
    t.queue = t.queue.slice(i);
    try {
      const outcomes = await t.send(calls.map((c) => c.entry));
      calls.forEach((c, k) => {
        const o = outcomes[k];
        if (o === undefined) c.reject(new Error('the gathered request answered fewer calls than it carried'));
        else if (o.ok) c.resolve(o.value);
        else c.reject(o.error);
      });
    } catch (err) {
      for (const c of calls) c.reject(err);
    }
    if (t.queue.length > 0) this.schedule(target, t);
    else {
      t.busy = false;
      this.targets.delete(target);
    }
  }
}
