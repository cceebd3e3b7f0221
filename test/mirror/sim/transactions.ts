/**
 * Transactions in the simulated logs, and what a read_committed reader makes of them: a
 * transactional data batch reads as committed or aborted by the first marker of its producer
 * after it (COMMIT or ABORT), and as committed when a MIRROR_PID_RESET comes first (the reset
 * clears producer state, so nothing holds the last stable offset back and the batch is in no
 * aborted-transaction entry); with neither, it is still open.
 */
import { buildEndTxnMarkerBatch } from '../../../src/protocol/control-records.js';
import { buildRecordBatch } from '../../../src/protocol/records.js';
import { ControlRecordType } from '../../../src/protocol/control-records.js';

export type TxnOutcome = 'committed' | 'aborted' | 'open';

/** What the outcome rule needs of a batch. */
export interface TxnView {
  readonly baseOffset: number;
  readonly producerId: number;
  readonly transactional: boolean;
  /** The control record type, -1 for a data batch. */
  readonly controlType: number;
}

/** The outcome of the data batch at `index`, with where its marker is (-1 when open). */
export function outcomeAt(batches: readonly TxnView[], index: number): { outcome: TxnOutcome; markerOffset: number } {
  const pid = batches[index]!.producerId;
  for (let i = index + 1; i < batches.length; i++) {
    const b = batches[i]!;
    if (b.controlType === ControlRecordType.MIRROR_PID_RESET) return { outcome: 'committed', markerOffset: b.baseOffset };
    if (b.controlType >= 0 && b.producerId === pid && (b.controlType === ControlRecordType.COMMIT || b.controlType === ControlRecordType.ABORT)) {
      return { outcome: b.controlType === ControlRecordType.COMMIT ? 'committed' : 'aborted', markerOffset: b.baseOffset };
    }
  }
  return { outcome: 'open', markerOffset: -1 };
}

/** Producers with a transaction open at the end of `batches` (what STOPPING must abort). */
export function openProducers(batches: readonly (TxnView & { readonly producerEpoch: number })[]): Map<number, number> {
  const open = new Map<number, number>();
  for (const b of batches) {
    if (b.controlType === ControlRecordType.MIRROR_PID_RESET) open.clear();
    else if (b.controlType >= 0) open.delete(b.producerId);
    else if (b.transactional) open.set(b.producerId, b.producerEpoch);
  }
  return open;
}

/** A source producer's transactional batch of one record. */
export function txnBatch(baseOffset: number, epoch: number, producerId: number, value: string): Buffer {
  return buildRecordBatch({ baseOffset, partitionLeaderEpoch: epoch, producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true, now: 1000, records: [{ value: Buffer.from(value) }] });
}

/** The source's transaction coordinator ends a transaction in a partition. */
export function txnMarker(baseOffset: number, epoch: number, producerId: number, commit: boolean): Buffer {
  return buildEndTxnMarkerBatch({ baseOffset, partitionLeaderEpoch: epoch, producerId, producerEpoch: 0, coordinatorEpoch: 0, commit, timestamp: 1000 });
}

/**
 * Checks a stopped destination log against its source: every transaction of a producer the
 * mirror copied reads as the source's did when its marker is within the mirrored range, and as
 * aborted when it was open at the stop (the stop's ABORT markers); none is left open. `mirrored`
 * is how many offsets of the destination are the source's, from 0.
 */
export function checkStoppedTransactions(dest: readonly TxnView[], source: readonly TxnView[] | null, mirrored: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < dest.length; i++) {
    const b = dest[i]!;
    if (!b.transactional || b.controlType >= 0 || b.baseOffset >= mirrored) continue;
    const here = outcomeAt(dest, i);
    const srcIndex = source === null ? -1 : source.findIndex((x) => x.baseOffset === b.baseOffset);
    const there = srcIndex < 0 ? null : outcomeAt(source!, srcIndex);
    const markedWithin = there !== null && there.outcome !== 'open' && there.markerOffset < mirrored;
    const expected: TxnOutcome = markedWithin ? there.outcome : 'aborted';
    if (here.outcome !== expected) {
      const what = markedWithin ? `${there.outcome} on the source at ${there.markerOffset}` : 'open at the stop';
      out.push(`producer ${b.producerId}'s transaction at ${b.baseOffset} reads as ${here.outcome} on the stopped destination (${what}, ${mirrored} offsets mirrored)`);
    }
  }
  return out;
}
