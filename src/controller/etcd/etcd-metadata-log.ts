/**
 * The metadata log kept in etcd: one key per record, `<prefix>/log/<20-digit offset>`, whose value
 * is the metadata record exactly as the file log stores it (Kafka's MetadataRecordSerde framing),
 * and `<prefix>/log-head` holding the offset of the last record. One controller write is one etcd
 * transaction, so its records share one etcd revision and every node sees them as one batch.
 *
 * Fencing: a transaction commits only if `log-head` still names the offset the writer validated
 * against (compare-and-swap on the last offset), and, for writes only the active controller may
 * make, only if the election key is still the one this node created (a deposed controller's
 * writes fail; Kafka fences them with the KRaft leader epoch).
 *
 * Replay is a read of the snapshot and the log at one revision R, then a watch from R+1; etcd
 * delivers the events of one revision together, which keeps a write's records together on every
 * node.
 *
 * Snapshots (metadata-snapshot.ts): `<prefix>/snapshot` names the latest one (its offset and
 * chunk count) and `<prefix>/snapshots/<20-digit offset>/<6-digit chunk>` holds its entries.
 * Writing one is a transaction that points `snapshot` at it, deletes every log key up to its
 * offset and the previous snapshot, and then etcd's history is compacted to that transaction's
 * revision, so etcd keeps the snapshot, the log after it, and no older revisions. A watch
 * that had fallen behind the compacted revision is cancelled by etcd; it then loads the snapshot
 * and the tail again (`onReload`) and watches on from there, instead of dying.
 */
import type { Etcd3, IKeyValue, Watcher } from 'etcd3';
import type { MetadataLogStore } from '../controller.js';

/** What a write must still hold to commit (the election key of the active controller). */
export interface ControllerFence {
  readonly key: string;
  readonly createRevision: string;
}

type AppendOutcome =
  | { readonly kind: 'ok'; readonly lastOffset: number }
  | { readonly kind: 'stale'; readonly headOffset: number }
  | { readonly kind: 'notController' };

/** A snapshot as stored: the offset it stands at and its entries (each applied at its own offset). */
export interface StoredSnapshot {
  readonly offset: number;
  readonly entries: readonly { readonly offset: number; readonly value: Buffer }[];
}

/** What a reload after a compacted watch brings: the snapshot (if any) and every record after it. */
export interface ReloadedLog {
  readonly snapshot: StoredSnapshot | null;
  readonly records: readonly { readonly offset: number; readonly value: Buffer }[];
}

/** A metadata log other nodes write too: appends are conditional and new records arrive by watch. */
export interface ReplicatedMetadataLogStore extends Omit<MetadataLogStore, 'append' | 'replay'> {
  readonly replicated: true;
  /** The snapshot first (when there is one), then every record after it, in offset order. */
  replay(cb: (offset: number, value: Buffer) => void, onSnapshot?: (snapshot: StoredSnapshot) => void): Promise<void>;
  appendIf(values: readonly Buffer[], expectedLastOffset: number, asController: boolean): Promise<AppendOutcome>;
  /**
   * Delivers every batch committed after the replay, in order (its first offset and values);
   * after the watch fell behind a compaction, the reloaded snapshot and tail instead.
   */
  follow(onBatch: (firstOffset: number, values: readonly Buffer[]) => void, onReload: (log: ReloadedLog) => void): Promise<void>;
  /** Stores a snapshot, trims the log up to it and compacts etcd; false when a newer one exists. */
  writeSnapshot(snapshot: StoredSnapshot): Promise<boolean>;
  /** The offset of the latest snapshot this node knows of (-1: none). */
  readonly snapshotOffset: number;
}

const PAGE = 1000;
/** Snapshot chunks stay well below etcd's default request limit (1.5 MiB). */
const CHUNK_BYTES = 512 * 1024;
const RELOAD_ATTEMPTS = 5;

function isCompacted(err: unknown): boolean {
  return String(err).includes('compacted');
}

/** Entries as `int64 offset | int32 length | value`, cut into chunks at entry boundaries. */
function packChunks(entries: StoredSnapshot['entries']): Buffer[] {
  const chunks: Buffer[] = [];
  let parts: Buffer[] = [];
  let size = 0;
  for (const e of entries) {
    const head = Buffer.alloc(12);
    head.writeBigInt64BE(BigInt(e.offset), 0);
    head.writeInt32BE(e.value.length, 8);
    if (size > 0 && size + 12 + e.value.length > CHUNK_BYTES) {
      chunks.push(Buffer.concat(parts));
      parts = [];
      size = 0;
    }
    parts.push(head, e.value);
    size += 12 + e.value.length;
  }
  if (size > 0) chunks.push(Buffer.concat(parts));
  return chunks;
}

function unpackChunk(chunk: Buffer, out: { offset: number; value: Buffer }[]): void {
  let pos = 0;
  while (pos + 12 <= chunk.length) {
    const offset = Number(chunk.readBigInt64BE(pos));
    const len = chunk.readInt32BE(pos + 8);
    out.push({ offset, value: chunk.subarray(pos + 12, pos + 12 + len) });
    pos += 12 + len;
  }
}

export function offsetKey(prefix: string, offset: number): string {
  return `${prefix}/log/${String(offset).padStart(20, '0')}`;
}

export class EtcdMetadataLog implements ReplicatedMetadataLogStore {
  readonly replicated = true;
  private replayedRevision = '0';
  private watcher: Watcher | null = null;
  private nextOffset = 0;
  private latestSnapshot = -1;
  private closed = false;
  private followers: { onBatch: (firstOffset: number, values: readonly Buffer[]) => void; onReload: (log: ReloadedLog) => void } | null = null;
  private refollowing = false;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly fence: () => ControllerFence | null,
    private readonly onError: (err: unknown) => void,
  ) {}

  private get headKey(): string {
    return `${this.prefix}/log-head`;
  }

  private get snapshotKey(): string {
    return `${this.prefix}/snapshot`;
  }

  private chunkKey(offset: number, chunk: number): string {
    return `${this.prefix}/snapshots/${String(offset).padStart(20, '0')}/${String(chunk).padStart(6, '0')}`;
  }

  get snapshotOffset(): number {
    return this.latestSnapshot;
  }

  /**
   * The snapshot and the log after it, all read at one revision; read again from the start when
   * a compaction overtook the reads.
   */
  private async load(): Promise<ReloadedLog & { revision: string }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.loadOnce();
      } catch (err) {
        if (!isCompacted(err) || attempt >= RELOAD_ATTEMPTS) throw err;
      }
    }
  }

  private async loadOnce(): Promise<ReloadedLog & { revision: string }> {
    const head = await this.client.getAll().prefix(this.snapshotKey).exec();
    const revision = head.header.revision;
    const kv = head.kvs.find((k) => k.key.toString() === this.snapshotKey);
    let snapshot: StoredSnapshot | null = null;
    if (kv) {
      const meta = JSON.parse(kv.value.toString()) as { offset: number; chunks: number };
      const entries: { offset: number; value: Buffer }[] = [];
      for (let i = 0; i < meta.chunks; i++) {
        const chunk = await this.client.get(this.chunkKey(meta.offset, i)).revision(revision).buffer();
        if (chunk === null) throw new Error(`metadata snapshot ${meta.offset} misses chunk ${i}`);
        unpackChunk(chunk, entries);
      }
      snapshot = { offset: meta.offset, entries };
    }
    const records: { offset: number; value: Buffer }[] = [];
    let from = offsetKey(this.prefix, snapshot ? snapshot.offset + 1 : 0);
    const end = `${this.prefix}/log0`; // '/' + 1 = '0': the end of the `log/` range
    for (;;) {
      const res = await this.client.getAll().inRange({ start: from, end }).limit(PAGE).sort('Key', 'Ascend').revision(revision).exec();
      for (const r of res.kvs) records.push({ offset: Number(r.key.toString().slice(this.prefix.length + 5)), value: r.value });
      if (!res.more || res.kvs.length === 0) break;
      from = offsetKey(this.prefix, records[records.length - 1]!.offset + 1);
    }
    return { snapshot, records, revision };
  }

  private adopt(loaded: ReloadedLog & { revision: string }): void {
    this.replayedRevision = loaded.revision;
    if (loaded.snapshot) this.latestSnapshot = loaded.snapshot.offset;
    const last = loaded.records[loaded.records.length - 1]?.offset ?? loaded.snapshot?.offset ?? -1;
    this.nextOffset = last + 1;
  }

  async replay(cb: (offset: number, value: Buffer) => void, onSnapshot?: (snapshot: StoredSnapshot) => void): Promise<void> {
    const loaded = await this.load();
    if (loaded.snapshot) {
      if (!onSnapshot) throw new Error('the metadata log starts with a snapshot, but the reader cannot take one');
      onSnapshot(loaded.snapshot);
    }
    for (const r of loaded.records) cb(r.offset, r.value);
    this.adopt(loaded);
  }

  async follow(onBatch: (firstOffset: number, values: readonly Buffer[]) => void, onReload: (log: ReloadedLog) => void): Promise<void> {
    this.followers = { onBatch, onReload };
    const w = await this.client
      .watch()
      .prefix(`${this.prefix}/log/`)
      .startRevision(String(BigInt(this.replayedRevision) + 1n))
      .only('put')
      .create();
    this.watcher = w;
    w.on('data', (res) => {
      // A watch replaced by refollow() may still deliver: its events come again from the new one.
      if (this.watcher !== w) return;
      // Events of one revision are one write; group them so listeners see the write's batch.
      let group: IKeyValue[] = [];
      const flush = (): void => {
        if (group.length === 0) return;
        const offsets = group.map((kv) => Number(kv.key.toString().slice(this.prefix.length + 5)));
        const first = offsets[0]!;
        const values = group.map((kv) => kv.value);
        group = [];
        if (first + values.length <= this.nextOffset) return; // already replayed
        this.nextOffset = first + values.length;
        onBatch(first, values);
      };
      let rev: string | null = null;
      for (const ev of res.events) {
        const kv = ev.kv;
        if (rev !== null && kv.mod_revision !== rev) flush();
        rev = kv.mod_revision;
        group.push(kv);
      }
      flush();
    });
    w.on('error', (err) => {
      if (this.watcher !== w || this.closed) return;
      this.watcher = null;
      this.onError(err);
      void w.cancel().catch(() => undefined);
      void this.resume(onBatch, onReload);
    });
  }

  /**
   * Reads the log again now instead of waiting for the watch (which may still be reconnecting
   * after a partition), then watches on from there: what a node that registers again calls so it
   * catches up to the log end at once.
   */
  refollow(): void {
    const f = this.followers;
    if (f === null || this.closed || this.refollowing) return;
    this.refollowing = true;
    const old = this.watcher;
    this.watcher = null;
    if (old !== null) void old.cancel().catch(() => undefined);
    void this.resume(f.onBatch, f.onReload).finally(() => {
      this.refollowing = false;
    });
  }

  /** After a failed watch: the snapshot and tail again, then a new watch (retried until it works). */
  private async resume(onBatch: (firstOffset: number, values: readonly Buffer[]) => void, onReload: (log: ReloadedLog) => void): Promise<void> {
    while (!this.closed) {
      try {
        const loaded = await this.load();
        if (this.closed) return;
        const fresh = loaded.records.filter((r) => r.offset >= this.nextOffset);
        if (loaded.snapshot && loaded.snapshot.offset >= this.nextOffset) onReload(loaded);
        else if (fresh.length > 0) onReload({ snapshot: null, records: fresh });
        this.adopt(loaded);
        await this.follow(onBatch, onReload);
        return;
      } catch (err) {
        this.onError(err);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /**
   * Writes the snapshot's chunks, then in one transaction points `snapshot` at it (only if the
   * latest is older), deletes the log up to its offset and the previous snapshot's chunks; then
   * compacts etcd's history to that revision.
   */
  async writeSnapshot(snapshot: StoredSnapshot): Promise<boolean> {
    const cur = await this.client.getAll().prefix(this.snapshotKey).exec();
    const kv = cur.kvs.find((k) => k.key.toString() === this.snapshotKey);
    const prev = kv ? (JSON.parse(kv.value.toString()) as { offset: number }).offset : -1;
    if (prev >= snapshot.offset) return false;
    const chunks = packChunks(snapshot.entries);
    for (let i = 0; i < chunks.length; i++) await this.client.put(this.chunkKey(snapshot.offset, i)).value(chunks[i]!).exec();
    const guard = kv ? this.client.if(this.snapshotKey, 'Mod', '==', kv.mod_revision) : this.client.if(this.snapshotKey, 'Version', '==', 0);
    const ops = [
      this.client.put(this.snapshotKey).value(JSON.stringify({ offset: snapshot.offset, chunks: chunks.length })),
      this.client.delete().inRange({ start: offsetKey(this.prefix, 0), end: offsetKey(this.prefix, snapshot.offset + 1) }),
      ...(prev >= 0 ? [this.client.delete().prefix(`${this.prefix}/snapshots/${String(prev).padStart(20, '0')}/`)] : []),
    ];
    const res = await guard.then(...ops).commit();
    if (!res.succeeded) {
      await this.client.delete().prefix(`${this.prefix}/snapshots/${String(snapshot.offset).padStart(20, '0')}/`).exec();
      return false;
    }
    this.latestSnapshot = Math.max(this.latestSnapshot, snapshot.offset);
    await this.client.kv.compact({ revision: res.header.revision, physical: false });
    return true;
  }

  async appendIf(values: readonly Buffer[], expectedLastOffset: number, asController: boolean): Promise<AppendOutcome> {
    const fence = asController ? this.fence() : null;
    if (asController && fence === null) return { kind: 'notController' };
    let txn = expectedLastOffset < 0 ? this.client.if(this.headKey, 'Version', '==', 0) : this.client.if(this.headKey, 'Value', '==', String(expectedLastOffset));
    if (fence) txn = txn.and(fence.key, 'Create', '==', fence.createRevision);
    const last = expectedLastOffset + values.length;
    const puts = values.map((v, i) => this.client.put(offsetKey(this.prefix, expectedLastOffset + 1 + i)).value(v));
    const res = await txn
      .then(...puts, this.client.put(this.headKey).value(String(last)))
      .else(this.client.get(this.headKey), ...(fence ? [this.client.get(fence.key)] : []))
      .commit();
    if (res.succeeded) return { kind: 'ok', lastOffset: last };
    const head = res.responses[0]?.response_range?.kvs[0]?.value.toString();
    const headOffset = head === undefined ? -1 : Number(head);
    if (fence) {
      const ctl = res.responses[1]?.response_range?.kvs[0];
      if (!ctl || ctl.create_revision !== fence.createRevision) return { kind: 'notController' };
    }
    return { kind: 'stale', headOffset };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watcher?.cancel();
    this.watcher = null;
  }
}
