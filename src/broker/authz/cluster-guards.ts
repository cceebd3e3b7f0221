/**
 * Authorization of the cluster-wide admin APIs (Kafka's "Operations and resources on protocols"
 * table): the ACL APIs (DESCRIBE / ALTER on the cluster), configs (DESCRIBE_CONFIGS /
 * ALTER_CONFIGS on the resource: the cluster for brokers, the topic, the group, the cluster
 * mirror), SCRAM credentials (DESCRIBE / ALTER on the cluster), client quotas (DESCRIBE_CONFIGS /
 * ALTER_CONFIGS on the cluster), log dirs, reassignments, elections and the quorum.
 */
import { AclOperation, ResourceType } from '../../auth/acl-model.js';
import { ConfigResourceType } from '../../protocol/config-resource-type.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import type { AlterConfigsRequest } from '../../protocol/generated/messages/alter-configs-request.js';
import type { AlterConfigsResponseInput } from '../../protocol/generated/messages/alter-configs-response.js';
import type { AlterClientQuotasRequest } from '../../protocol/generated/messages/alter-client-quotas-request.js';
import type { AlterUserScramCredentialsRequest } from '../../protocol/generated/messages/alter-user-scram-credentials-request.js';
import type { CreateAclsRequest } from '../../protocol/generated/messages/create-acls-request.js';
import type { DeleteAclsRequest } from '../../protocol/generated/messages/delete-acls-request.js';
import type { DescribeConfigsRequest } from '../../protocol/generated/messages/describe-configs-request.js';
import type { DescribeConfigsResponseInput } from '../../protocol/generated/messages/describe-configs-response.js';
import type { IncrementalAlterConfigsRequest } from '../../protocol/generated/messages/incremental-alter-configs-request.js';
import type { IncrementalAlterConfigsResponseInput } from '../../protocol/generated/messages/incremental-alter-configs-response.js';
import type { RequestContext } from '../../server/api-handler.js';
import { guard, serveRest, wholeRequest, type Authz, type Guard } from './guard.js';

const CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;

/** One permission on the cluster for the whole request; `denied` is the answer without it. */
function onCluster<Req, Res>(apiKey: number, operation: number, denied: (req: Req) => Res): Guard<unknown, unknown> {
  return wholeRequest<Req, Res>(apiKey, (az, ctx) => az.canCluster(ctx, operation), denied);
}

/** The ACL resource and the error code of a config resource (KafkaApis / ConfigAdminManager). */
function configTarget(resourceType: number, name: string): { type: number; name: string; error: number } | null {
  switch (resourceType) {
    case ConfigResourceType.TOPIC:
      return { type: ResourceType.TOPIC, name, error: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
    case ConfigResourceType.GROUP:
      return { type: ResourceType.GROUP, name, error: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    case ConfigResourceType.CLUSTER_MIRROR:
      return { type: ResourceType.CLUSTER_MIRROR, name, error: ErrorCode.CLUSTER_MIRROR_AUTHORIZATION_FAILED };
    case ConfigResourceType.BROKER:
    case ConfigResourceType.BROKER_LOGGER:
    default:
      // Brokers, loggers and client-metrics resources are the cluster's.
      return { type: ResourceType.CLUSTER, name: 'kafka-cluster', error: CLUSTER_DENIED };
  }
}

function configAllowed(az: Authz, ctx: RequestContext, operation: number, resourceType: number, name: string): number {
  const t = configTarget(resourceType, name);
  if (t === null) return ErrorCode.NONE;
  return az.can(ctx, operation, t.type, t.name) ? ErrorCode.NONE : t.error;
}

interface ConfigResource {
  readonly resourceType: number;
  readonly resourceName: string;
}

/** Splits config resources into allowed and refused, serves the allowed, appends the refused. */
function configGuard<Req extends { resources: ConfigResource[] }, Res>(
  apiKey: number,
  operation: number,
  results: (res: Res) => readonly unknown[] | undefined,
  withResults: (res: Res, all: unknown[]) => Res,
): Guard<unknown, unknown> {
  return guard<Req, Res>(apiKey, (az, ctx, req, next) => {
    const refused: { errorCode: number; errorMessage: string | null; resourceType: number; resourceName: string }[] = [];
    const allowed = req.resources.filter((r) => {
      const code = configAllowed(az, ctx, operation, r.resourceType, r.resourceName);
      if (code === ErrorCode.NONE) return true;
      refused.push({ errorCode: code, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName });
      return false;
    });
    if (refused.length === 0) return next(ctx, req);
    return serveRest(ctx, { ...req, resources: allowed }, next, (res) => withResults(res, [...(results(res) ?? []), ...refused]));
  });
}

const describeConfigs = configGuard<DescribeConfigsRequest, DescribeConfigsResponseInput>(
  32,
  AclOperation.DESCRIBE_CONFIGS,
  (r) => r.results,
  (r, all) => ({ ...r, results: all.map((x) => ({ configs: [], ...(x as object) })) as DescribeConfigsResponseInput['results'] }),
);
const alterConfigs = configGuard<AlterConfigsRequest, AlterConfigsResponseInput>(33, AclOperation.ALTER_CONFIGS, (r) => r.responses, (r, all) => ({ ...r, responses: all as AlterConfigsResponseInput['responses'] }));
const incrementalAlterConfigs = configGuard<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponseInput>(
  44,
  AclOperation.ALTER_CONFIGS,
  (r) => r.responses,
  (r, all) => ({ ...r, responses: all as IncrementalAlterConfigsResponseInput['responses'] }),
);

const topLevel = (errorCode: number): { errorCode: number; errorMessage: null } => ({ errorCode, errorMessage: null });

export const CLUSTER_GUARDS: readonly Guard<unknown, unknown>[] = [
  onCluster(29, AclOperation.DESCRIBE, () => ({ ...topLevel(CLUSTER_DENIED), resources: [] })),
  onCluster<CreateAclsRequest, unknown>(30, AclOperation.ALTER, (req) => ({ results: req.creations.map(() => topLevel(CLUSTER_DENIED)) })),
  onCluster<DeleteAclsRequest, unknown>(31, AclOperation.ALTER, (req) => ({ filterResults: req.filters.map(() => ({ ...topLevel(CLUSTER_DENIED), matchingAcls: [] })) })),
  describeConfigs,
  alterConfigs,
  incrementalAlterConfigs,
  onCluster(35, AclOperation.DESCRIBE, () => ({ errorCode: CLUSTER_DENIED, results: [] })),
  onCluster(43, AclOperation.ALTER, () => ({ errorCode: CLUSTER_DENIED, replicaElectionResults: [] })),
  onCluster(45, AclOperation.ALTER, () => ({ ...topLevel(CLUSTER_DENIED), responses: [] })),
  onCluster(46, AclOperation.DESCRIBE, () => ({ ...topLevel(CLUSTER_DENIED), topics: [] })),
  onCluster(48, AclOperation.DESCRIBE_CONFIGS, () => ({ ...topLevel(CLUSTER_DENIED), entries: null })),
  onCluster<AlterClientQuotasRequest, unknown>(49, AclOperation.ALTER_CONFIGS, (req) => ({ entries: req.entries.map((e) => ({ ...topLevel(CLUSTER_DENIED), entity: e.entity })) })),
  onCluster(50, AclOperation.DESCRIBE, () => ({ ...topLevel(CLUSTER_DENIED), results: [] })),
  onCluster<AlterUserScramCredentialsRequest, unknown>(51, AclOperation.ALTER, (req) => ({
    results: [...new Set([...req.deletions.map((d) => d.name), ...req.upsertions.map((u) => u.name)])].map((user) => ({ user, ...topLevel(CLUSTER_DENIED) })),
  })),
  onCluster(55, AclOperation.DESCRIBE, () => ({ ...topLevel(CLUSTER_DENIED), topics: [], nodes: [] })),
  onCluster(74, AclOperation.DESCRIBE_CONFIGS, () => ({ errorCode: CLUSTER_DENIED, configResources: [] })),
];
