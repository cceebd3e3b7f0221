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
 * Replay is a range read at one revision R, then a watch from R+1; etcd delivers the events of
 * one revision together, which keeps a write's records together on every node.
 */
import type { Etcd3, IKeyValue, Watcher } from 'etcd3';
import type { MetadataLogStore } from '../controller.js';

/** What a write must still hold to commit (the election key of the active controller). */
export interface ControllerFence {
  readonly key: string;
  readonly createRevision: string;
}

export type AppendOutcome =
  | { readonly kind: 'ok'; readonly lastOffset: number }
  | { readonly kind: 'stale'; readonly headOffset: number }
  | { readonly kind: 'notController' };

/** A metadata log other nodes write too: appends are conditional and new records arrive by watch. */
export interface ReplicatedMetadataLogStore extends Omit<MetadataLogStore, 'append'> {
  readonly replicated: true;
  appendIf(values: readonly Buffer[], expectedLastOffset: number, asController: boolean): Promise<AppendOutcome>;
  /** Delivers every batch committed after the replay, in order (its first offset and values). */
  follow(onBatch: (firstOffset: number, values: readonly Buffer[]) => void): Promise<void>;
}

const PAGE = 1000;

export function offsetKey(prefix: string, offset: number): string {
  return `${prefix}/log/${String(offset).padStart(20, '0')}`;
}

export class EtcdMetadataLog implements ReplicatedMetadataLogStore {
  readonly replicated = true;
  private replayedRevision = '0';
  private watcher: Watcher | null = null;
  private nextOffset = 0;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly fence: () => ControllerFence | null,
    private readonly onError: (err: unknown) => void,
  ) {}

  private get headKey(): string {
    return `${this.prefix}/log-head`;
  }

  async replay(cb: (offset: number, value: Buffer) => void): Promise<void> {
    // Pages of one consistent snapshot: every page reads at the revision of the first.
    let from = offsetKey(this.prefix, 0);
    const end = `${this.prefix}/log0`; // '/' + 1 = '0': the end of the `log/` range
    let revision: string | null = null;
    for (;;) {
      let q = this.client.getAll().inRange({ start: from, end }).limit(PAGE).sort('Key', 'Ascend');
      if (revision !== null) q = q.revision(revision);
      const res = await q.exec();
      revision ??= res.header.revision;
      for (const kv of res.kvs) {
        const offset = Number(kv.key.toString().slice(this.prefix.length + 5));
        cb(offset, kv.value);
        this.nextOffset = offset + 1;
      }
      if (!res.more || res.kvs.length === 0) break;
      from = offsetKey(this.prefix, this.nextOffset);
    }
    this.replayedRevision = revision ?? '0';
  }

  async follow(onBatch: (firstOffset: number, values: readonly Buffer[]) => void): Promise<void> {
    const w = await this.client
      .watch()
      .prefix(`${this.prefix}/log/`)
      .startRevision(String(BigInt(this.replayedRevision) + 1n))
      .only('put')
      .create();
    this.watcher = w;
    w.on('data', (res) => {
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
    w.on('error', (err) => this.onError(err));
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
    await this.watcher?.cancel();
    this.watcher = null;
  }
}
