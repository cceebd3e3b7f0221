/**
 * DescribeCluster (key 60), v0-2.
 *
 * Behavior: the brokers are those Metadata lists (a node alone: itself; a cluster: the live
 * registrations), ControllerId the active controller. A node that is itself fenced lists itself
 * too, with IsFenced true (v2+), so an operator asking it directly sees why. EndpointType 1 (brokers) is the
 * only kind served; 2 (controllers) answers UNSUPPORTED_ENDPOINT_TYPE as a broker listener does.
 * Cluster authorized operations are every cluster operation when asked (no authorizer).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeClusterRequest, type DescribeClusterRequest } from '../../protocol/generated/messages/describe-cluster-request.js';
import { encodeDescribeClusterResponse, type DescribeClusterResponseInput } from '../../protocol/generated/messages/describe-cluster-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { CLUSTER_OPERATIONS, metadataBrokers } from './003-metadata.js';

function brokers(ctx: BrokerContext, listener: Parameters<typeof metadataBrokers>[1], v: number): NonNullable<DescribeClusterResponseInput['brokers']> {
  const out = metadataBrokers(ctx, listener).map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack, ...(v >= 2 ? { isFenced: false } : {}) }));
  if (ctx.cluster.fenced && !out.some((b) => b.brokerId === ctx.nodeId)) {
    out.push({ brokerId: ctx.nodeId, host: listener?.host ?? ctx.host, port: listener?.port ?? ctx.port, rack: ctx.config.get('broker.rack') ?? null, ...(v >= 2 ? { isFenced: true } : {}) });
  }
  return out;
}

export function describeClusterHandler(ctx: BrokerContext): ApiHandler<DescribeClusterRequest, DescribeClusterResponseInput> {
  return {
    apiKey: 60,
    minVersion: 0,
    maxVersion: 2,
    decode: decodeDescribeClusterRequest,
    encode: encodeDescribeClusterResponse,
    handle(rc, req) {
      const v = rc.apiVersion;
      if (v >= 1 && req.endpointType !== 1) {
        return {
          throttleTimeMs: 0,
          errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
          errorMessage: 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER',
          endpointType: req.endpointType,
          clusterId: ctx.clusterId,
          controllerId: -1,
          brokers: [],
        };
      }
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        ...(v >= 1 ? { endpointType: 1 } : {}),
        clusterId: ctx.clusterId,
        controllerId: ctx.cluster.controllerId(),
        brokers: brokers(ctx, rc.listener, v),
        clusterAuthorizedOperations: req.includeClusterAuthorizedOperations ? CLUSTER_OPERATIONS : -2147483648,
      };
    },
  };
}
