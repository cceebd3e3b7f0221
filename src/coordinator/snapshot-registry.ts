/**
 * Snapshots of a coordinator shard's state, so a write can be applied before its records are
 * durable and undone when the append fails: the role of Kafka's `SnapshotRegistry` and its
 * timeline collections (org.apache.kafka.timeline). Instead of versioning every entry, a
 * `SnapshotMap` keeps the pre-image of each key it is asked about while a snapshot is open, the
 * first time it is asked; reverting puts those pre-images back. Snapshots nest (the runtime
 * opens one per batch and one per write inside it), and closing the inner one hands its
 * pre-images to the outer one.
 *
 * The contract for what a SnapshotMap holds: a value is changed only after it was fetched with
 * `get` (or replaced with `set`, removed with `delete`) since the snapshot was opened; values
 * reached by iterating the map are for reading. A map whose values are mutable objects is given a
 * `clone`, so the pre-image is a copy and not the object being changed.
 *
 * Concurrency contract: one shard, one event loop; snapshots open and close in stack order.
 */

interface Journal {
  /** Opens a level; pre-images are recorded into it from now on. */
  open(): void;
  /** Puts the pre-images of the top level back and drops the level. */
  revert(): void;
  /** Drops the top level, handing pre-images the level below lacks down to it. */
  close(): void;
}

export class SnapshotRegistry {
  private readonly journals: Journal[] = [];
  private depth = 0;

  /** Called by each SnapshotMap of the shard when it is created. */
  register(j: Journal): void {
    this.journals.push(j);
  }

  /** True while a snapshot is open: changes are being recorded. */
  get recording(): boolean {
    return this.depth > 0;
  }

  /** Opens a snapshot of the state as it is now. */
  snapshot(): void {
    this.depth++;
    for (const j of this.journals) j.open();
  }

  /** Restores the state as of the innermost open snapshot and closes it. */
  revert(): void {
    if (this.depth === 0) throw new Error('no open snapshot to revert to');
    for (const j of this.journals) j.revert();
    this.depth--;
  }

  /** Keeps the changes made since the innermost snapshot and closes it. */
  release(): void {
    if (this.depth === 0) throw new Error('no open snapshot to release');
    for (const j of this.journals) j.close();
    this.depth--;
  }
}

const ABSENT: unique symbol = Symbol('absent');

/** A Map whose changes can be undone to the registry's open snapshot. */
export class SnapshotMap<K, V> extends Map<K, V> {
  private readonly levels: Map<K, V | typeof ABSENT>[] = [];
  private readonly clone: ((v: V) => V) | null;

  /**
   * `clone` copies a value whose object is changed in place (a group); without it values are
   * treated as immutable and only `set`/`delete` are recorded. `onRevert` runs for each key put
   * back (with its restored value, or undefined when the key did not exist).
   */
  constructor(
    private readonly registry: SnapshotRegistry,
    clone?: (v: V) => V,
    private readonly onRevert?: (key: K, restored: V | undefined) => void,
  ) {
    super();
    this.clone = clone ?? null;
    registry.register({ open: () => this.levels.push(new Map()), revert: () => this.revertTop(), close: () => this.closeTop() });
  }

  override get(key: K): V | undefined {
    if (this.clone !== null) this.save(key);
    return super.get(key);
  }

  override set(key: K, value: V): this {
    this.save(key);
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    this.save(key);
    return super.delete(key);
  }

  override clear(): void {
    for (const k of this.keys()) this.save(k);
    super.clear();
  }

  private save(key: K): void {
    // Map's constructor may call set before the fields exist; nothing is open then.
    const top = this.levels?.[this.levels.length - 1];
    if (top === undefined || top.has(key)) return;
    if (!super.has(key)) top.set(key, ABSENT);
    else {
      const v = super.get(key) as V;
      top.set(key, this.clone === null ? v : this.clone(v));
    }
  }

  private revertTop(): void {
    const top = this.levels.pop();
    if (top === undefined) return;
    for (const [k, v] of top) {
      if (v === ABSENT) super.delete(k);
      else super.set(k, v);
      this.onRevert?.(k, v === ABSENT ? undefined : v);
    }
  }

  private closeTop(): void {
    const top = this.levels.pop();
    const below = this.levels[this.levels.length - 1];
    if (top === undefined || below === undefined) return;
    for (const [k, v] of top) if (!below.has(k)) below.set(k, v);
  }
}
