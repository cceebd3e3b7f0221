import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildEndTxnMarkerBatch } from '../../src/protocol/control-records.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { batch, openLog, removeDir, tempDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

const idem = (pid: number, epoch: number, seq: number, n = 2) => batch(n, { producerId: pid, producerEpoch: epoch, baseSequence: seq, tag: `p${pid}e${epoch}s${seq}` });
const txn = (pid: number, epoch: number, seq: number, n = 2) =>
  batch(n, { producerId: pid, producerEpoch: epoch, baseSequence: seq, isTransactional: true, tag: `t${pid}s${seq}` });
const marker = (commit: boolean, pid: number, epoch: number, coordinatorEpoch = 0) =>
  buildEndTxnMarkerBatch({ commit, producerId: pid, producerEpoch: epoch, coordinatorEpoch, timestamp: 1_700_000_000_000 });

describe('idempotent producers', () => {
  it('accepts in-order sequences, returns the original offsets for duplicates, rejects gaps and old epochs', async () => {
    const { log } = await openLog(dir);
    expect(await log.appendAsLeader(idem(7, 0, 0, 3), 0)).toMatchObject({ errorCode: 0, baseOffset: 0, lastOffset: 2 });
    expect(await log.appendAsLeader(idem(7, 0, 3), 0)).toMatchObject({ errorCode: 0, baseOffset: 3, lastOffset: 4 });
    const dup = await log.appendAsLeader(idem(7, 0, 0, 3), 0);
    expect(dup).toMatchObject({ errorCode: 0, baseOffset: 0, lastOffset: 2 });
    expect(log.logEndOffset).toBe(5);
    expect((await log.appendAsLeader(idem(7, 0, 9), 0)).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect((await log.appendAsLeader(idem(7, 1, 4), 0)).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(await log.appendAsLeader(idem(7, 1, 0), 0)).toMatchObject({ errorCode: 0, baseOffset: 5 });
    expect((await log.appendAsLeader(idem(7, 0, 5), 0)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    // an unknown producer may start anywhere (its state may have been removed by retention)
    expect((await log.appendAsLeader(idem(8, 0, 42), 0)).errorCode).toBe(0);
    expect(log.producerStates().find((p) => p.producerId === 7)).toMatchObject({ producerEpoch: 1, lastSequence: 1 });
    await log.close();
  });

  it('detects duplicates among the last five batches only', async () => {
    const { log } = await openLog(dir);
    for (let i = 0; i < 6; i++) expect((await log.appendAsLeader(idem(3, 0, i * 2), 0)).errorCode).toBe(0);
    expect(await log.appendAsLeader(idem(3, 0, 2), 0)).toMatchObject({ errorCode: 0, baseOffset: 2 });
    expect((await log.appendAsLeader(idem(3, 0, 0), 0)).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    await log.close();
  });

  it('keeps producer state across clean and unclean restarts', async () => {
    const { log } = await openLog(dir);
    for (let i = 0; i < 4; i++) await log.appendAsLeader(idem(11, 2, i * 2), 0);
    await log.close();
    const { log: clean } = await openLog(dir, {}, { cleanShutdown: true });
    expect(await clean.appendAsLeader(idem(11, 2, 6), 0)).toMatchObject({ errorCode: 0, baseOffset: 6 });
    expect((await clean.appendAsLeader(idem(11, 2, 9), 0)).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    await clean.flush();
    await clean.closeHandlers();
    // unclean: state is rebuilt from the batches (all five recent batches known again)
    const { log: unclean } = await openLog(dir);
    expect(await unclean.appendAsLeader(idem(11, 2, 2), 0)).toMatchObject({ errorCode: 0, baseOffset: 2 });
    expect(await unclean.appendAsLeader(idem(11, 2, 8), 0)).toMatchObject({ errorCode: 0, baseOffset: 8 });
    await unclean.close();
  });
});

describe('transactions', () => {
  it('holds the last stable offset at the first open transaction until its marker', async () => {
    const { log } = await openLog(dir);
    await log.appendAsLeader(batch(2), 0);
    await log.appendAsLeader(txn(20, 0, 0), 0);
    await log.appendAsLeader(batch(2), 0);
    expect(log.highWatermark).toBe(6);
    expect(log.lastStableOffset).toBe(2);
    expect(log.ongoingTransactions()).toEqual([{ producerId: 20, firstOffset: 2 }]);
    expect((await log.appendAsLeader(idem(20, 0, 2), 0)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect((await log.appendAsLeader(marker(true, 20, 0), 0, { origin: 'coordinator', coordinatorEpoch: 0 })).errorCode).toBe(0);
    expect(log.lastStableOffset).toBe(7);
    const r = await log.read({ fetchOffset: 0, maxOffset: log.lastStableOffset, maxBytes: 1 << 20, minOneMessage: true, readCommitted: true });
    expect(r.abortedTransactions).toEqual([]);
    await log.close();
  });

  it('records aborted transactions in .txnindex and reports them to read_committed fetches', async () => {
    const { log } = await openLog(dir);
    await log.appendAsLeader(txn(30, 1, 0), 0);
    await log.appendAsLeader(txn(31, 1, 0), 0);
    await log.appendAsLeader(txn(30, 1, 2), 0);
    expect(log.lastStableOffset).toBe(0);
    await log.appendAsLeader(marker(false, 30, 1), 0, { origin: 'coordinator' });
    expect(log.lastStableOffset).toBe(2);
    await log.appendAsLeader(marker(true, 31, 1), 0, { origin: 'coordinator' });
    expect(log.lastStableOffset).toBe(8);
    const r = await log.read({ fetchOffset: 0, maxOffset: 8, maxBytes: 1 << 20, minOneMessage: true, readCommitted: true });
    expect(r.abortedTransactions).toEqual([{ producerId: 30, firstOffset: 0 }]);
    const later = await log.read({ fetchOffset: 7, maxOffset: 8, maxBytes: 1 << 20, minOneMessage: true, readCommitted: true });
    expect(later.abortedTransactions).toEqual([]);
    const idx = await readFile(join(dir, '00000000000000000000.txnindex'));
    expect(idx.length).toBe(34);
    expect(Number(idx.readBigInt64BE(2))).toBe(30);
    expect(Number(idx.readBigInt64BE(10))).toBe(0);
    expect(Number(idx.readBigInt64BE(18))).toBe(6);
    await log.flush();
    await log.closeHandlers();
    const { log: again } = await openLog(dir);
    const r2 = await again.read({ fetchOffset: 0, maxOffset: 8, maxBytes: 1 << 20, minOneMessage: true, readCommitted: true });
    expect(r2.abortedTransactions).toEqual([{ producerId: 30, firstOffset: 0 }]);
    expect(again.lastStableOffset).toBe(8);
    await again.close();
  });

  it('reports exactly the aborted transactions overlapping each read_committed fetch', async () => {
    const { log } = await openLog(dir);
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 16) % n;
    };
    const seq = new Map<number, number>();
    const open = new Map<number, number>();
    const aborted: { producerId: number; firstOffset: number; lastOffset: number }[] = [];
    for (let step = 0; step < 120; step++) {
      const pid = 100 + rand(4);
      const choice = rand(4);
      if (choice < 2) {
        const s = seq.get(pid) ?? 0;
        const r = await log.appendAsLeader(txn(pid, 0, s, 1 + rand(2)), 0);
        expect(r.errorCode).toBe(0);
        seq.set(pid, s + (r.lastOffset - r.baseOffset + 1));
        if (!open.has(pid)) open.set(pid, r.baseOffset);
      } else if (choice === 2 && open.has(pid)) {
        const abort = rand(2) === 0;
        const r = await log.appendAsLeader(marker(!abort, pid, 0), 0, { origin: 'coordinator' });
        expect(r.errorCode).toBe(0);
        if (abort) aborted.push({ producerId: pid, firstOffset: open.get(pid)!, lastOffset: r.baseOffset });
        open.delete(pid);
      } else {
        await log.appendAsLeader(batch(1), 0);
      }
    }
    expect(aborted.length).toBeGreaterThan(3);
    expect(log.lastStableOffset).toBe(open.size === 0 ? log.logEndOffset : Math.min(...open.values()));
    const lso = log.lastStableOffset;
    for (let from = 0; from < lso; from += 3) {
      const r = await log.read({ fetchOffset: from, maxOffset: lso, maxBytes: 1 << 20, minOneMessage: true, readCommitted: true });
      const want = aborted.filter((t) => t.lastOffset >= from && t.firstOffset < lso).map((t) => ({ producerId: t.producerId, firstOffset: t.firstOffset }));
      expect(r.abortedTransactions).toEqual(want);
    }
    await log.close();
  });

  it('restores open transactions after a restart', async () => {
    const { log } = await openLog(dir);
    await log.appendAsLeader(batch(1), 0);
    await log.appendAsLeader(txn(40, 0, 0), 0);
    await log.close();
    const { log: again } = await openLog(dir, {}, { cleanShutdown: true });
    expect(again.lastStableOffset).toBe(1);
    await again.appendAsLeader(marker(false, 40, 0), 0, { origin: 'coordinator' });
    expect(again.lastStableOffset).toBe(4);
    await again.close();
  });

  it('fences markers with an old producer epoch or coordinator epoch', async () => {
    const { log } = await openLog(dir);
    await log.appendAsLeader(txn(50, 3, 0), 0);
    expect((await log.appendAsLeader(marker(true, 50, 2), 0, { origin: 'coordinator' })).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await log.appendAsLeader(marker(true, 50, 3, 5), 0, { origin: 'coordinator' })).errorCode).toBe(0);
    await log.appendAsLeader(txn(50, 3, 2), 0);
    expect((await log.appendAsLeader(marker(true, 50, 3, 4), 0, { origin: 'coordinator' })).errorCode).toBe(ErrorCode.TRANSACTION_COORDINATOR_FENCED);
    await log.close();
  });
});
