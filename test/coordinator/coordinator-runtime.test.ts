import { afterEach, describe, expect, it } from 'vitest';
import { CoordinatorRuntime, partitionForKey } from '../../src/coordinator/coordinator-runtime.js';
import { KafkaError } from '../../src/protocol/kafka-error.js';
import type { CoordinatorShard, ShardContext, WriteResult } from '../../src/coordinator/coordinator-runtime.js';
import { readCoordinatorBatches, type ReplayedRecord } from '../../src/coordinator/coordinator-batch.js';
import { SnapshotMap, SnapshotRegistry } from '../../src/coordinator/snapshot-registry.js';
import { testHost } from './harness.js';
import { TempLogs } from './logs.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';

/** A key/value shard: its state is exactly the replay of its records. */
class KvShard implements CoordinatorShard {
  readonly snapshots = new SnapshotRegistry();
  readonly kv = new SnapshotMap<string, string>(this.snapshots);
  loaded = false;
  constructor(readonly ctx: ShardContext<KvShard>) {}
  replay(r: ReplayedRecord): void {
    const k = r.key.toString();
    if (r.value === null) this.kv.delete(k);
    else this.kv.set(k, r.value.toString());
  }
  onLoaded(): void {
    this.loaded = true;
  }
  put(k: string, v: string | null): WriteResult<string | undefined> {
    return { records: [{ key: Buffer.from(k), value: v === null ? null : Buffer.from(v) }], response: this.kv.get(k) };
  }
}

const temps: TempLogs[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.destroy();
});

function runtime(t: TempLogs, existing: Record<string, number> = {}) {
  const host = testHost(t.openLog, {}, existing);
  return { host, rt: new CoordinatorRuntime<KvShard>({ host, topic: '__kv', partitions: 3, newShard: (ctx) => new KvShard(ctx) }) };
}

describe('coordinator runtime', () => {
  it("maps keys to partitions with Kafka's abs(String.hashCode) % n", () => {
    expect(partitionForKey('abc', 50)).toBe(96354 % 50);
    expect(partitionForKey('polygenelubricants', 50)).toBe(0); // hashCode is Integer.MIN_VALUE
    expect(partitionForKey('', 50)).toBe(0);
  });

  it('runs writes of a shard in order, each seeing the committed effect of the previous', async () => {
    const t = new TempLogs();
    temps.push(t);
    const { rt } = runtime(t);
    const seen = await Promise.all(Array.from({ length: 20 }, (_, i) => rt.writeTo(0, (s) => s.put('k', String(i)))));
    expect(seen).toEqual([undefined, ...Array.from({ length: 19 }, (_, i) => String(i))]);
    expect(await rt.readFrom(0, (s) => s.kv.get('k'))).toBe('19');
    await rt.close();
  });

  it('applies nothing when the append fails, maps the error, and keeps serving', async () => {
    const t = new TempLogs();
    temps.push(t);
    const { rt } = runtime(t);
    await rt.writeTo(1, (s) => s.put('a', '1'));
    t.fs.failNextWrite();
    const failed = await rt.writeTo(1, (s) => s.put('a', '2')).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(KafkaError);
    expect((failed as KafkaError).code).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await rt.readFrom(1, (s) => s.kv.get('a'))).toBe('1');
    t.fs.failNextWrite();
    const answered = await rt.writeTo(1, (s) => ({ ...s.put('a', '3'), onAppendFailed: (code) => `failed ${code}` }));
    expect(answered).toBe(`failed ${ErrorCode.NOT_COORDINATOR}`);
    const thrown = await rt.writeTo(1, () => {
      throw new Error('bad op');
    }).catch((e: Error) => e.message);
    expect(thrown).toBe('bad op');
    // An operation that changed the shard and then threw leaves nothing behind.
    const half = await rt.writeTo(1, (s) => {
      s.kv.set('a', 'half');
      s.kv.set('b', 'half');
      throw new Error('half done');
    }).catch((e: Error) => e.message);
    expect(half).toBe('half done');
    expect(await rt.readFrom(1, (s) => [...s.kv])).toEqual([['a', '1']]);
    expect(await rt.writeTo(1, (s) => s.put('a', '4'))).toBe('1');
    expect(await rt.readFrom(1, (s) => s.kv.get('a'))).toBe('4');
    await rt.close();
  });

  it('coalesces the writes queued behind an append into one append; a failed one fails them all, in order', async () => {
    const t = new TempLogs();
    temps.push(t);
    const appends: number[] = [];
    const gates: (() => void)[] = [];
    const host = testHost(async (topic, partition) => {
      const log = await t.openLog(topic, partition);
      return {
        get logStartOffset() {
          return log.logStartOffset;
        },
        get logEndOffset() {
          return log.logEndOffset;
        },
        readFrom: (o, n) => log.readFrom(o, n),
        async append(batch) {
          await new Promise<void>((r) => gates.push(r));
          appends.push([...readCoordinatorBatches(batch)].reduce((n, b) => n + b.records.length, 0));
          return log.append(batch);
        },
      };
    });
    const rt = new CoordinatorRuntime<KvShard>({ host, topic: '__kv', partitions: 1, newShard: (ctx) => new KvShard(ctx) });
    await rt.load(0);
    const release = async (): Promise<void> => {
      while (gates.length === 0) await new Promise<void>((r) => setImmediate(r));
      gates.shift()!();
    };
    const first = rt.writeTo(0, (s) => s.put('k', '0'));
    const rest = Array.from({ length: 9 }, (_, i) => rt.writeTo(0, (s) => s.put('k', String(i + 1))));
    // A read while the first append is out waits for it: it never sees uncommitted state.
    let answered = false;
    const during = rt.readFrom(0, (s) => s.kv.get('k') ?? 'none').finally(() => (answered = true));
    await new Promise<void>((r) => setImmediate(r));
    expect(answered).toBe(false);
    await release();
    expect(await first).toBeUndefined();
    expect(await during).toBe('0');
    await release();
    expect(await Promise.all(rest)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8']);
    expect(appends).toEqual([1, 9]);

    const ok = rt.writeTo(0, (s) => s.put('k', 'ok'));
    const doomed = Array.from({ length: 4 }, (_, i) => rt.writeTo(0, (s) => s.put(`d${i}`, 'x')).catch((e: unknown) => e));
    await release();
    expect(await ok).toBe('9');
    t.fs.failNextWrite();
    await release();
    const failed = await Promise.all(doomed);
    expect(failed.map((e) => (e as KafkaError).code)).toEqual(Array(4).fill(ErrorCode.NOT_COORDINATOR));
    expect(appends).toEqual([1, 9, 1, 4]);
    expect(await rt.readFrom(0, (s) => [...s.kv])).toEqual([['k', 'ok']]);
    await rt.close();
  });

  it('replays a partition into the same state and runs timers as writes', async () => {
    const t = new TempLogs();
    temps.push(t);
    const { host, rt } = runtime(t);
    for (let i = 0; i < 50; i++) await rt.writeTo(i % 3, (s) => s.put(`k${i % 7}`, i % 5 === 0 ? null : String(i)));
    const shard = await rt.load(2);
    shard.ctx.scheduleTimer('later', 1000, (s) => s.put('timer', 'fired'));
    shard.ctx.scheduleTimer('cancelled', 500, (s) => s.put('never', 'x'));
    shard.ctx.cancelTimer('cancelled');
    await host.manual.advance(999);
    expect(shard.kv.has('timer')).toBe(false);
    await host.manual.advance(1);
    await rt.idle();
    expect(shard.kv.get('timer')).toBe('fired');
    expect(shard.kv.has('never')).toBe(false);
    const live = [0, 1, 2].map((p) => [...rt.loadedShards().get(p)!.kv].sort());
    await rt.close();
    await t.closeAll();
    const again = runtime(t, { __kv: 3 });
    await again.rt.loadAll();
    expect([0, 1, 2].map((p) => [...again.rt.loadedShards().get(p)!.kv].sort())).toEqual(live);
    expect(again.rt.loadedShards().get(0)!.loaded).toBe(true);
    await again.rt.close();
    await expect(again.rt.writeTo(0, (s) => s.put('x', 'y'))).rejects.toBeInstanceOf(KafkaError);
  });

  it('runs timers that are due before a write or read that arrives after their deadline, earliest first', async () => {
    const t = new TempLogs();
    temps.push(t);
    const { host, rt } = runtime(t);
    const shard = await rt.load(0);
    shard.ctx.scheduleTimer('second', 200, (s) => s.put('order', `${s.kv.get('order') ?? ''}second,`));
    shard.ctx.scheduleTimer('first', 100, (s) => s.put('order', `${s.kv.get('order') ?? ''}first,`));
    shard.ctx.scheduleTimer('not-yet', 1000, (s) => s.put('order', `${s.kv.get('order') ?? ''}not-yet,`));
    // The clock passes both deadlines but their callbacks have not run (a late event loop).
    host.manual.now += 300;
    expect(await rt.writeTo(0, (s) => s.put('order', `${s.kv.get('order') ?? ''}write,`))).toBe('first,second,');
    shard.ctx.scheduleTimer('third', 50, (s) => s.put('order', `${s.kv.get('order') ?? ''}third,`));
    host.manual.now += 50;
    expect(await rt.readFrom(0, (s) => s.kv.get('order'))).toBe('first,second,write,third,');
    // Their callbacks, when they come, find nothing left to do; the timer not due yet still runs once.
    await host.manual.advance(1000);
    await rt.idle();
    expect(shard.kv.get('order')).toBe('first,second,write,third,not-yet,');
    await rt.close();
  });

  it('on a cluster serves only partitions led here: unloads on resignation, reloads from the log on election', async () => {
    const t = new TempLogs();
    temps.push(t);
    const base = testHost(t.openLog);
    const led = new Set([0]);
    const listeners = new Set<() => void>();
    const changeLeaders = (ps: number[]): void => {
      led.clear();
      for (const p of ps) led.add(p);
      for (const l of listeners) l();
    };
    // The first replay is held until `release()`, so a request can meet a shard still loading.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const host = {
      ...base,
      openInternalPartition: async (...a: Parameters<typeof base.openInternalPartition>) => {
        await gate;
        return base.openInternalPartition(...a);
      },
      leadership: {
        leads: (_topic: string, p: number) => led.has(p),
        leaderEndpoint: (_topic: string, p: number) => (led.has(p) ? { nodeId: 1, host: '127.0.0.1', port: 9092 } : { nodeId: 2, host: '127.0.0.1', port: 9093 }),
        leaderEpoch: () => 0,
        ensureTopic: () => undefined,
        onChange: (cb: () => void) => {
          listeners.add(cb);
          return () => listeners.delete(cb);
        },
      },
    };
    const rt = new CoordinatorRuntime<KvShard>({ host, topic: '__kv', partitions: 3, newShard: (ctx) => new KvShard(ctx) });
    const code = (p: Promise<unknown>): Promise<number> => p.then(() => 0, (e: unknown) => (e instanceof KafkaError ? e.code : -1));
    // Not led here: NOT_COORDINATOR; led, with a replay that does not end within the wait:
    // COORDINATOR_LOAD_IN_PROGRESS; a request that arrives while the replay runs waits for it.
    expect(await code(rt.writeTo(1, (s) => s.put('x', '1')))).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await code(rt.writeTo(0, (s) => s.put('a', '1')))).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    const served = code(rt.writeTo(0, (s) => s.put('a', '1')));
    release();
    expect(await served).toBe(0);
    let fired = false;
    await rt.writeTo(0, (s) => {
      s.ctx.scheduleTimer('t', 1000, (s2) => {
        fired = true;
        return s2.put('timer', 'ran');
      });
      return s.put('b', '2');
    });
    // Resignation: state dropped, timers cancelled, requests refused.
    changeLeaders([1]);
    expect(rt.loadedShards().has(0)).toBe(false);
    expect(await code(rt.readFrom(0, (s) => s.kv.get('a')))).toBe(ErrorCode.NOT_COORDINATOR);
    await base.manual.advance(2000);
    expect(fired).toBe(false);
    // Election again: replayed from the log, every committed write is back.
    changeLeaders([0, 1]);
    await expect.poll(() => rt.loadedShards().has(0)).toBe(true);
    expect(await rt.readFrom(0, (s) => [s.kv.get('a'), s.kv.get('b'), s.kv.get('timer')])).toEqual(['1', '2', undefined]);
    await rt.close();
  });
});
