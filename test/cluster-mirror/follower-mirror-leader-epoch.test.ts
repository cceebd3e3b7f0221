/**
 * The KAFKA-18723 race on a mirror partition, replayed to a real follower over TCP. The
 * follower's fetch loop (src/replication/replica-fetcher.ts, appending into a real PartitionLog)
 * fetches from a scripted leader on 127.0.0.1 that answers the way a Fjord leader answers when
 * its log is cut and rewritten between checking a request and reading the records: the source
 * had an unclean leader election, so the mirror leader dropped offset 2 (epoch 1) and copied the
 * new source leader's offsets 2-3 (epoch 2), all under the same destination leader epoch. The
 * first answer was checked against the old log (no divergence, MirrorLeaderEpoch 1) but carries
 * offset 3 of the new one. A follower that takes it keeps offset 2, a batch the new source
 * leader never had, and no later LastFetchedEpoch check can find it.
 *
 * The leader here is a script because the race cannot be timed from outside a real one; every
 * answer after the first is the honest one for the leader's log.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameDecoder } from '../../src/protocol/frame-decoder.js';
import { API_TABLE, ApiKey } from '../../src/protocol/generated/api-table.js';
import { decodeApiVersionsRequest } from '../../src/protocol/generated/messages/api-versions-request.js';
import { encodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { decodeFetchRequest, type FetchRequestFetchPartition } from '../../src/protocol/generated/messages/fetch-request.js';
import { encodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { decodeRequestHeader } from '../../src/protocol/generated/messages/request-header.js';
import { Reader } from '../../src/protocol/reader.js';
import { RecordBatchView } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../../src/protocol/records.js';
import { Writer } from '../../src/protocol/writer.js';
import type { Logger } from '../../src/common/logger.js';
import { ReplicaFetcher } from '../../src/replication/replica-fetcher.js';
import { logConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { waitFor } from '../helpers/wait.js';

const TOPIC_ID = '6d6c6531-0000-4000-8000-000000000001';
/** The destination leader epoch: above every source epoch, as the KIP's bumps keep it (§9.4). */
const DESTINATION_EPOCH = 7;

const batch = (offset: number, epoch: number, value: string): Buffer =>
  buildRecordBatch({ baseOffset: offset, partitionLeaderEpoch: epoch, now: 1_700_000_000_000 + offset, records: [{ value: Buffer.from(value) }] });

/** What both logs share, the batch the source lost, and the new source leader's history. */
const A0 = batch(0, 1, 'a0');
const A1 = batch(1, 1, 'a1');
const D2 = batch(2, 1, 'lost-d2');
const E2 = batch(2, 2, 'new-e2');
const F3 = batch(3, 2, 'new-f3');
const LEADER_LOG = [A0, A1, E2, F3];

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet };

interface Seen {
  readonly fetchOffset: number;
  readonly lastFetchedEpoch: number;
  readonly mirrorLeaderEpoch: number;
}

let server: Server;
let port = 0;
const seen: Seen[] = [];
const sockets = new Set<Socket>();
const dir = mkdtempSync(join(tmpdir(), 'fjord-follower-mle-'));

/** The honest answer of a leader holding LEADER_LOG (epoch 1 ends at 2, epoch 2 is the latest). */
function honest(p: FetchRequestFetchPartition) {
  const fetchOffset = Number(p.fetchOffset);
  const base = { partitionIndex: 0, errorCode: 0, highWatermark: 4n, lastStableOffset: 4n, logStartOffset: 0n, ...(p.mirrorLeaderEpoch >= 0 ? { mirrorLeaderEpoch: 2 } : {}) };
  if (p.lastFetchedEpoch === 1 && fetchOffset > 2) return { ...base, divergingEpoch: { epoch: 1, endOffset: 2n }, records: Buffer.alloc(0) };
  return { ...base, records: Buffer.concat(LEADER_LOG.slice(fetchOffset)) };
}

/** The first answer: checked against the log before the cut (MirrorLeaderEpoch 1), records read after it. */
function racing(p: FetchRequestFetchPartition) {
  return { partitionIndex: 0, errorCode: 0, highWatermark: 3n, lastStableOffset: 3n, logStartOffset: 0n, ...(p.mirrorLeaderEpoch >= 0 ? { mirrorLeaderEpoch: 1 } : {}), records: F3 };
}

function answer(frame: Buffer): Buffer | null {
  const apiKey = frame.readInt16BE(0);
  const apiVersion = frame.readInt16BE(2);
  const api = API_TABLE[apiKey];
  if (api === undefined) return null;
  const r = new Reader(frame);
  const header = decodeRequestHeader(r, api.requestHeaderVersion(Math.min(apiVersion, api.maxVersion)));
  const w = new Writer();
  w.reserve(4);
  w.int32(header.correlationId);
  if (apiKey === ApiKey.ApiVersions) {
    decodeApiVersionsRequest(r, apiVersion);
    encodeApiVersionsResponse(w, { errorCode: 0, apiKeys: [{ apiKey: ApiKey.Fetch, minVersion: 4, maxVersion: 19 }, { apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 4 }] }, apiVersion);
  } else if (apiKey === ApiKey.Fetch) {
    if (api.responseHeaderVersion(apiVersion) === 1) w.uvarint(0);
    const req = decodeFetchRequest(r, apiVersion);
    const p = req.topics[0]!.partitions[0]!;
    seen.push({ fetchOffset: Number(p.fetchOffset), lastFetchedEpoch: p.lastFetchedEpoch, mirrorLeaderEpoch: apiVersion >= 19 ? p.mirrorLeaderEpoch : -1 });
    const pd = seen.length === 1 ? racing(p) : honest(p);
    encodeFetchResponse(w, { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topicId: TOPIC_ID, partitions: [pd] }] }, apiVersion);
  } else {
    return null;
  }
  const out = w.toBuffer();
  out.writeInt32BE(out.length - 4, 0);
  return out;
}

/** "offset@epoch:value" of every batch (one record each) in segment bytes. */
function batchesOf(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let pos = 0; pos + 61 <= bytes.length; ) {
    const b = new RecordBatchView(bytes, pos);
    for (const r of decodeRecords(b)) out.push(`${r.offset}@${b.partitionLeaderEpoch}:${r.value?.toString() ?? ''}`);
    pos += b.sizeInBytes;
  }
  return out;
}

function segments(d: string): Buffer {
  return Buffer.concat(readdirSync(d).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(join(d, f))));
}

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const frames = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      for (const f of frames.push(chunk)) {
        const reply = answer(f);
        if (reply === null) socket.destroy();
        else socket.write(reply);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('a follower of a mirror partition with mirror.support.unclean.leader.election=true', () => {
  it('skips batches above the MirrorLeaderEpoch it fetched with, so the batch the new source leader lacks is truncated, not kept', async () => {
    const log = await PartitionLog.open({ dir: join(dir, 'lossy-0'), topicId: TOPIC_ID, config: logConfig() });
    // What the follower copied before the source's unclean election.
    expect((await log.appendAsMirror(Buffer.concat([A0, A1, D2]))).errorCode).toBe(0);
    const fetcher = new ReplicaFetcher(1, { host: '127.0.0.1', port }, {
      nodeId: 2,
      brokerEpoch: () => 1,
      maxBytes: 1 << 20,
      responseMaxBytes: 1 << 20,
      maxWaitMs: 50,
      minBytes: 1,
      backoffMs: 50,
      log: quiet,
    });
    try {
      fetcher.add({ topic: 'lossy', topicId: TOPIC_ID, partition: 0, log, leaderEpoch: DESTINATION_EPOCH, delayedUntil: 0, maxBytes: 1 << 20, wantsMirrorLeaderEpoch: () => true });
      const want = Buffer.concat(LEADER_LOG);
      await waitFor('the follower log equal to the leader log', async () => segments(join(dir, 'lossy-0')).equals(want), 10_000, 50).catch(() => undefined);
      expect(batchesOf(segments(join(dir, 'lossy-0')))).toEqual(batchesOf(want));
      // Fetch v19 with MirrorLeaderEpoch from the first request on.
      expect(seen[0]).toEqual({ fetchOffset: 3, lastFetchedEpoch: 1, mirrorLeaderEpoch: 0 });
      expect(seen.some((s) => s.mirrorLeaderEpoch === 2)).toBe(true);
      expect(log.logEndOffset).toBe(4);
    } finally {
      await fetcher.close();
      await log.close();
    }
  });
});
