/**
 * The mirroring RPCs of a node's mirror side, each call encoded with the generated request codec,
 * run through the handler, and its encoded response decoded again: the whole wire path but the
 * socket, for tests that drive the mirroring code beside a MirrorTestHost.
 */
import type { ApiHandler, RequestContext } from '../../../src/server/api-handler.js';
import type { MirrorApiHandlers } from '../../../src/mirror/mirror-host.js';
import { ApiKey } from '../../../src/protocol/generated/api-table.js';
import { encodeBumpLeaderEpochsRequest } from '../../../src/protocol/generated/messages/bump-leader-epochs-request.js';
import { decodeBumpLeaderEpochsResponse } from '../../../src/protocol/generated/messages/bump-leader-epochs-response.js';
import { encodeCreateClusterMirrorRequest } from '../../../src/protocol/generated/messages/create-cluster-mirror-request.js';
import { decodeCreateClusterMirrorResponse } from '../../../src/protocol/generated/messages/create-cluster-mirror-response.js';
import { encodeDescribeClusterMirrorsRequest } from '../../../src/protocol/generated/messages/describe-cluster-mirrors-request.js';
import { decodeDescribeClusterMirrorsResponse, type DescribeClusterMirrorsResponse } from '../../../src/protocol/generated/messages/describe-cluster-mirrors-response.js';
import { encodePauseMirrorTopicsRequest } from '../../../src/protocol/generated/messages/pause-mirror-topics-request.js';
import { decodePauseMirrorTopicsResponse } from '../../../src/protocol/generated/messages/pause-mirror-topics-response.js';
import { encodeResumeMirrorTopicsRequest } from '../../../src/protocol/generated/messages/resume-mirror-topics-request.js';
import { decodeResumeMirrorTopicsResponse } from '../../../src/protocol/generated/messages/resume-mirror-topics-response.js';
import { encodeStartMirrorTopicsRequest } from '../../../src/protocol/generated/messages/start-mirror-topics-request.js';
import { decodeStartMirrorTopicsResponse } from '../../../src/protocol/generated/messages/start-mirror-topics-response.js';
import { encodeStopMirrorTopicsRequest } from '../../../src/protocol/generated/messages/stop-mirror-topics-request.js';
import { decodeStopMirrorTopicsResponse } from '../../../src/protocol/generated/messages/stop-mirror-topics-response.js';
import { Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
export { waitFor } from '../../helpers/wait.js';

export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

const ctx: RequestContext = {
  apiKey: 0,
  apiVersion: 0,
  correlationId: 1,
  clientId: 'test',
  connectionId: 'c1',
  principal: 'User:ANONYMOUS',
  clientAddress: '127.0.0.1',
  signal: new AbortController().signal,
};

export interface StartTopic {
  readonly topicName: string;
  readonly topicId?: string;
  readonly numPartitions?: number;
}

export function mirrorRpc(mirror: MirrorApiHandlers) {
  async function call<Req, Res>(apiKey: number, encode: (w: Writer, m: Req, v: number) => void, req: Req, decode: (r: Reader, v: number) => Res): Promise<Res> {
    const h = mirror.handlers.find((x) => x.apiKey === apiKey) as ApiHandler | undefined;
    if (h === undefined) throw new Error(`no handler for ${apiKey}`);
    const w = new Writer();
    encode(w, req, 0);
    const res = await h.handle({ ...ctx, apiKey }, h.decode(new Reader(w.toBuffer()), 0));
    const out = new Writer();
    h.encode(out, res, 0);
    return decode(new Reader(out.toBuffer()), 0);
  }
  const names = (topics: string[]) => topics.map((topicName) => ({ topicName }));
  return {
    create: (mirrorName: string, config: Record<string, string>) =>
      call(ApiKey.CreateClusterMirror, encodeCreateClusterMirrorRequest, { mirrorName, config: Object.entries(config).map(([name, value]) => ({ name, value })) }, decodeCreateClusterMirrorResponse),
    start: (mirrorName: string, topics: (string | StartTopic)[], includePatterns: string[] = []) =>
      call(
        ApiKey.StartMirrorTopics,
        encodeStartMirrorTopicsRequest,
        {
          mirrorName,
          topics: topics.map((t) => (typeof t === 'string' ? { topicName: t } : t)).map((t) => ({ topicName: t.topicName, topicId: t.topicId ?? ZERO_UUID, numPartitions: t.numPartitions ?? 0 })),
          includePatterns,
          stateValidationOffset: -1n,
        },
        decodeStartMirrorTopicsResponse,
      ),
    stop: (mirrorName: string, topics: string[]) => call(ApiKey.StopMirrorTopics, encodeStopMirrorTopicsRequest, { mirrorName, topics: names(topics), stateValidationOffset: -1n }, decodeStopMirrorTopicsResponse),
    pause: (mirrorName: string, topics: string[]) => call(ApiKey.PauseMirrorTopics, encodePauseMirrorTopicsRequest, { mirrorName, topics: names(topics), stateValidationOffset: -1n }, decodePauseMirrorTopicsResponse),
    resume: (mirrorName: string, topics: string[]) => call(ApiKey.ResumeMirrorTopics, encodeResumeMirrorTopicsRequest, { mirrorName, topics: names(topics), stateValidationOffset: -1n }, decodeResumeMirrorTopicsResponse),
    describe: (mirrorNames: string[]) =>
      call(ApiKey.DescribeClusterMirrors, encodeDescribeClusterMirrorsRequest, { mirrorNames, includeAuthorizedOperations: false, clusterId: null, lastMirrorEpochLookups: [] }, decodeDescribeClusterMirrorsResponse),
    bumpLeaderEpochs: (topicId: string, partitionIndex: number, minLeaderEpoch: number) =>
      call(ApiKey.BumpLeaderEpochs, encodeBumpLeaderEpochsRequest, { topics: [{ topicId, partitions: [{ partitionIndex, minLeaderEpoch }] }] }, decodeBumpLeaderEpochsResponse),
  };
}

/** One partition as DescribeClusterMirrors shows it. */
export function describedPartition(d: DescribeClusterMirrorsResponse, topic: string, partition: number) {
  for (const m of d.mirrors) for (const t of m.topics) if (t.topicName === topic) return t.partitions.find((p) => p.partitionIndex === partition);
  return undefined;
}

