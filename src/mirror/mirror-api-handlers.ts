/**
 * The KIP-1279 RPC handlers (CreateClusterMirror 106 — 94 in the prototype, see
 * messages/README.md — StartMirrorTopics 95, StopMirrorTopics 96, ListClusterMirrors 98,
 * DescribeClusterMirrors 99, ReadMirrorStates 100, WriteMirrorStates 101, PauseMirrorTopics 102,
 * ResumeMirrorTopics 103, DeleteClusterMirror 104, BumpLeaderEpochs 105), all v0 flexible.
 *
 * Behavior: each handler decodes with the generated codec, runs the control-plane operation
 * (./mirror-control.ts for operators, ./inter-broker-rpcs.ts for brokers) and answers with per-topic error codes; nothing is thrown to the
 * connection. Version notes: only v0 exists for every one of them.
 *
 * `createMirrorApiHandlers(host)` builds the whole mirroring side of a node: the `__mirror_state`
 * coordinator, the metadata manager (state machine + fetchers) and these handlers.
 */
import type { ApiHandler } from '../server/api-handler.js';
import { ApiKey } from '../protocol/generated/api-table.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { decodeBumpLeaderEpochsRequest, type BumpLeaderEpochsRequest } from '../protocol/generated/messages/bump-leader-epochs-request.js';
import { encodeBumpLeaderEpochsResponse, type BumpLeaderEpochsResponseInput } from '../protocol/generated/messages/bump-leader-epochs-response.js';
import { decodeCreateClusterMirrorRequest, type CreateClusterMirrorRequest } from '../protocol/generated/messages/create-cluster-mirror-request.js';
import { encodeCreateClusterMirrorResponse, type CreateClusterMirrorResponseInput } from '../protocol/generated/messages/create-cluster-mirror-response.js';
import { decodeDeleteClusterMirrorRequest, type DeleteClusterMirrorRequest } from '../protocol/generated/messages/delete-cluster-mirror-request.js';
import { encodeDeleteClusterMirrorResponse, type DeleteClusterMirrorResponseInput } from '../protocol/generated/messages/delete-cluster-mirror-response.js';
import { decodeDescribeClusterMirrorsRequest, type DescribeClusterMirrorsRequest } from '../protocol/generated/messages/describe-cluster-mirrors-request.js';
import { encodeDescribeClusterMirrorsResponse, type DescribeClusterMirrorsResponseInput } from '../protocol/generated/messages/describe-cluster-mirrors-response.js';
import { decodeListClusterMirrorsRequest, type ListClusterMirrorsRequest } from '../protocol/generated/messages/list-cluster-mirrors-request.js';
import { encodeListClusterMirrorsResponse, type ListClusterMirrorsResponseInput } from '../protocol/generated/messages/list-cluster-mirrors-response.js';
import { decodePauseMirrorTopicsRequest, type PauseMirrorTopicsRequest } from '../protocol/generated/messages/pause-mirror-topics-request.js';
import { encodePauseMirrorTopicsResponse, type PauseMirrorTopicsResponseInput } from '../protocol/generated/messages/pause-mirror-topics-response.js';
import { decodeReadMirrorStatesRequest, type ReadMirrorStatesRequest } from '../protocol/generated/messages/read-mirror-states-request.js';
import { encodeReadMirrorStatesResponse, type ReadMirrorStatesResponseInput } from '../protocol/generated/messages/read-mirror-states-response.js';
import { decodeResumeMirrorTopicsRequest, type ResumeMirrorTopicsRequest } from '../protocol/generated/messages/resume-mirror-topics-request.js';
import { encodeResumeMirrorTopicsResponse, type ResumeMirrorTopicsResponseInput } from '../protocol/generated/messages/resume-mirror-topics-response.js';
import { decodeStartMirrorTopicsRequest, type StartMirrorTopicsRequest } from '../protocol/generated/messages/start-mirror-topics-request.js';
import { encodeStartMirrorTopicsResponse, type StartMirrorTopicsResponseInput } from '../protocol/generated/messages/start-mirror-topics-response.js';
import { decodeStopMirrorTopicsRequest, type StopMirrorTopicsRequest } from '../protocol/generated/messages/stop-mirror-topics-request.js';
import { encodeStopMirrorTopicsResponse, type StopMirrorTopicsResponseInput } from '../protocol/generated/messages/stop-mirror-topics-response.js';
import { decodeWriteMirrorStatesRequest, type WriteMirrorStatesRequest } from '../protocol/generated/messages/write-mirror-states-request.js';
import { encodeWriteMirrorStatesResponse, type WriteMirrorStatesResponseInput } from '../protocol/generated/messages/write-mirror-states-response.js';
import type { Reader } from '../protocol/reader.js';
import type { Writer } from '../protocol/writer.js';
import { ControlQueue } from './control-queue.js';
import { mirrorBrokerConfig } from './mirror-config.js';
import { MirrorConfigResource } from './mirror-config-resource.js';
import { MirrorControlPlane } from './mirror-control.js';
import { MirrorCoordinator } from './mirror-coordinator.js';
import type { MirrorApiHandlers, MirrorHost } from './mirror-host.js';
import { MirrorManager } from './mirror-manager.js';
import { MirrorInterBrokerRpcs } from './inter-broker-rpcs.js';
import { MirrorStateClient } from './mirror-state-client.js';
import { MirrorStateCleanup } from './mirror-state-cleanup.js';

function handler<Req, Res>(
  apiKey: number,
  decode: (r: Reader, v: number) => Req,
  encode: (w: Writer, m: Res, v: number) => void,
  handle: (req: Req) => Promise<Res> | Res,
  onError: (code: number, message: string) => Res,
): ApiHandler<Req, Res> {
  return {
    apiKey,
    minVersion: 0,
    maxVersion: 0,
    decode,
    encode,
    async handle(_ctx, req) {
      try {
        return await handle(req);
      } catch (e) {
        // Internal failures become their Kafka code (UNKNOWN_SERVER_ERROR when they carry none)
        // in the response, never a closed connection.
        return onError(errorCodeOf(e), (e as Error).message);
      }
    },
  };
}

interface MirrorApiOptions {
  /** Log sink for state transitions and failures (default: none). */
  readonly log?: (msg: string) => void;
  /** Log sink for what an operator should look at (default: the `log` sink). */
  readonly warn?: (msg: string) => void;
}

export async function createMirrorApiHandlers(host: MirrorHost, opts: MirrorApiOptions = {}): Promise<MirrorApiHandlers> {
  const config = mirrorBrokerConfig((k) => host.config(k));
  const coordinator = new MirrorCoordinator(host, config.stateTopicPartitions, (topicId, partition) => {
    const topic = host.topicNameById(topicId);
    return topic === undefined ? undefined : host.leaderEpoch(topic, partition);
  });
  // Partition leaders reach each partition's coordinator through this, here or on another node.
  const stateClient = new MirrorStateClient(host, coordinator);
  const manager = new MirrorManager(host, stateClient, config, opts.log, opts.warn ?? opts.log);
  const queue = new ControlQueue(host, () => manager.sync());
  const control = new MirrorControlPlane(host, manager, queue);
  const interBroker = new MirrorInterBrokerRpcs(host, coordinator);
  const configResource = new MirrorConfigResource(host, queue);
  manager.sourceSync.topicDiscovery = {
    start: (mirrorName, topics) => control.startMirrorTopics(mirrorName, topics.map((topicName) => ({ topicName, topicId: '00000000-0000-0000-0000-000000000000', numPartitions: 0 })), [], [], -1),
    stop: (mirrorName, topics) => control.stopMirrorTopics(mirrorName, topics, [], -1),
  };
  manager.start();
  const cleanup = new MirrorStateCleanup(host, coordinator, config.metadataRefreshIntervalMs, opts.log);
  cleanup.start();

  const handlers: ApiHandler[] = [
    handler<CreateClusterMirrorRequest, CreateClusterMirrorResponseInput>(
      ApiKey.CreateClusterMirror,
      decodeCreateClusterMirrorRequest,
      encodeCreateClusterMirrorResponse,
      async (req) => ({ throttleTimeMs: 0, ...(await control.createClusterMirror(req.mirrorName, req.config)) }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<StartMirrorTopicsRequest, StartMirrorTopicsResponseInput>(
      ApiKey.StartMirrorTopics,
      decodeStartMirrorTopicsRequest,
      encodeStartMirrorTopicsResponse,
      async (req) => ({
        throttleTimeMs: 0,
        ...(await control.startMirrorTopics(req.mirrorName, req.topics, req.includePatterns, req.excludePatterns, Number(req.stateValidationOffset))),
      }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<StopMirrorTopicsRequest, StopMirrorTopicsResponseInput>(
      ApiKey.StopMirrorTopics,
      decodeStopMirrorTopicsRequest,
      encodeStopMirrorTopicsResponse,
      async (req) => ({
        throttleTimeMs: 0,
        ...(await control.stopMirrorTopics(req.mirrorName, req.topics.map((t) => t.topicName), req.patterns, Number(req.stateValidationOffset))),
      }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<PauseMirrorTopicsRequest, PauseMirrorTopicsResponseInput>(
      ApiKey.PauseMirrorTopics,
      decodePauseMirrorTopicsRequest,
      encodePauseMirrorTopicsResponse,
      async (req) => ({ throttleTimeMs: 0, ...(await control.pauseMirrorTopics(req.mirrorName, req.topics.map((t) => t.topicName), Number(req.stateValidationOffset))) }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<ResumeMirrorTopicsRequest, ResumeMirrorTopicsResponseInput>(
      ApiKey.ResumeMirrorTopics,
      decodeResumeMirrorTopicsRequest,
      encodeResumeMirrorTopicsResponse,
      async (req) => ({ throttleTimeMs: 0, ...(await control.resumeMirrorTopics(req.mirrorName, req.topics.map((t) => t.topicName), Number(req.stateValidationOffset))) }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<DeleteClusterMirrorRequest, DeleteClusterMirrorResponseInput>(
      ApiKey.DeleteClusterMirror,
      decodeDeleteClusterMirrorRequest,
      encodeDeleteClusterMirrorResponse,
      async (req) => ({ throttleTimeMs: 0, ...(await control.deleteClusterMirror(req.mirrorName, Number(req.stateValidationOffset))) }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<ListClusterMirrorsRequest, ListClusterMirrorsResponseInput>(
      ApiKey.ListClusterMirrors,
      decodeListClusterMirrorsRequest,
      encodeListClusterMirrorsResponse,
      // StateOffset: the image offset read from, for the client's StateValidationOffset (spec §4.2).
      (req) => ({ throttleTimeMs: 0, errorCode: 0, errorMessage: null, mirrors: control.listClusterMirrors(req.includeTopicNames), stateOffset: BigInt(host.metadataOffset()) }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<DescribeClusterMirrorsRequest, DescribeClusterMirrorsResponseInput>(
      ApiKey.DescribeClusterMirrors,
      decodeDescribeClusterMirrorsRequest,
      encodeDescribeClusterMirrorsResponse,
      async (req) => {
        const mirrors = (await control.describeClusterMirrors(req.mirrorNames)).map((m) => ({
          errorCode: m.errorCode,
          mirrorName: m.mirrorName,
          authorizedOperations: -2147483648,
          topics: m.topics.map((t) => ({
            topicName: t.topicName,
            desiredState: t.desiredState,
            partitions: t.partitions.map((p) => ({
              partitionIndex: p.partition,
              sourceOffset: int64(p.sourceOffset),
              destinationOffset: int64(p.destinationOffset),
              lag: int64(p.lag),
              stateValue: p.stateName,
              retryAttempt: p.retryAttempt,
              errorMessage: p.errorMessage,
              mirroredMaxTimestamp: int64(p.mirroredMaxTimestamp),
              sourceMaxTimestamp: int64(p.sourceMaxTimestamp),
              lastFetchTimestamp: int64(p.lastFetchTimestamp),
              linkError: p.linkError,
            })),
          })),
        }));
        const lookupResults =
          req.clusterId !== null && req.lastMirrorEpochLookups.length > 0 ? await interBroker.lookupLastMirrorEpochs(req.clusterId, req.lastMirrorEpochLookups) : [];
        return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, mirrors, lookupResults };
      },
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<ReadMirrorStatesRequest, ReadMirrorStatesResponseInput>(
      ApiKey.ReadMirrorStates,
      decodeReadMirrorStatesRequest,
      encodeReadMirrorStatesResponse,
      async (req) => ({
        throttleTimeMs: 0,
        errorCode: 0,
        errorMessage: null,
        topics: await interBroker.readMirrorStates(req.mirrorName, req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) }))),
      }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<WriteMirrorStatesRequest, WriteMirrorStatesResponseInput>(
      ApiKey.WriteMirrorStates,
      decodeWriteMirrorStatesRequest,
      encodeWriteMirrorStatesResponse,
      async (req) => ({ throttleTimeMs: 0, errorCode: 0, errorMessage: null, topics: await interBroker.writeMirrorStates(req.mirrorName, req.topics) }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
    handler<BumpLeaderEpochsRequest, BumpLeaderEpochsResponseInput>(
      ApiKey.BumpLeaderEpochs,
      decodeBumpLeaderEpochsRequest,
      encodeBumpLeaderEpochsResponse,
      async (req) => ({ throttleTimeMs: 0, errorCode: 0, errorMessage: null, topics: await interBroker.bumpLeaderEpochs(req.topics) }),
      (code, m) => ({ errorCode: code, errorMessage: m }),
    ),
  ] as ApiHandler[];

  return {
    handlers,
    isProduceAllowed: (topic, partition) => manager.produceGuard.isProduceAllowed(topic, partition),
    produceError: (topic, partition) => manager.produceGuard.writeError(topic, partition),
    describeMirrorConfig: (name) => configResource.describeMirrorConfig(name),
    alterMirrorConfig: (name, alterations, validateOnly) => configResource.alterMirrorConfig(name, alterations, validateOnly),
    async close() {
      cleanup.close();
      await manager.close();
      stateClient.close();
      await coordinator.close();
    },
  };
}

export type { MirrorApiHandlers, MirrorHost };

/**
 * An int64 field of a describe answer. Most are -1 (a partition not fetching) or 0 (lag of one
 * caught up), and a describe of every partition is polled: those two need no new BigInt each.
 */
function int64(n: number): bigint {
  return n === -1 ? -1n : n === 0 ? 0n : BigInt(n);
}
