/**
 * The shape of one API's authorization: a guard sees the decoded request before the handler
 * does, answers it with Kafka's authorization error codes where the caller lacks a permission,
 * and hands the handler the part it may serve (the way Kafka's KafkaApis splits a request into
 * authorized and unauthorized resources, serves the first and merges the second back as errors).
 * Keeping the checks here leaves every handler as it is without an authorizer.
 */
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../auth/acl-model.js';
import type { StandardAuthorizer } from '../../auth/authorizer.js';
import type { MetadataImage } from '../../controller/metadata-image.js';
import type { RequestContext } from '../../server/api-handler.js';

type Handle<Req, Res> = (ctx: RequestContext, req: Req) => Promise<Res | null> | Res | null;

/** What guards ask: the authorizer, and the image to resolve topic ids to names. */
export class Authz {
  constructor(
    readonly authorizer: StandardAuthorizer,
    readonly image: MetadataImage,
    /** `auto.create.topics.enable` as it stands now (a dynamic broker config). */
    readonly autoCreateTopicsEnable: () => boolean,
  ) {}

  can(ctx: RequestContext, operation: number, resourceType: number, name: string): boolean {
    return this.authorizer.authorize(ctx, operation, resourceType, name);
  }

  canCluster(ctx: RequestContext, operation: number): boolean {
    return this.authorizer.authorize(ctx, operation, ResourceType.CLUSTER, CLUSTER_NAME);
  }

  topic(ctx: RequestContext, operation: number, name: string): boolean {
    return this.authorizer.authorize(ctx, operation, ResourceType.TOPIC, name);
  }

  group(ctx: RequestContext, operation: number, groupId: string): boolean {
    return this.authorizer.authorize(ctx, operation, ResourceType.GROUP, groupId);
  }

  transactionalId(ctx: RequestContext, id: string): boolean {
    return this.authorizer.authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, id);
  }

  /** The topic a request names by name, or by id (v13+ Fetch/Produce); '' when the id is unknown. */
  topicName(name: string | null, topicId: string | undefined): string {
    if (name) return name;
    return (topicId && this.image.topicsById.get(topicId)?.name) || '';
  }
}

export interface Guard<Req, Res> {
  readonly apiKey: number;
  run(az: Authz, ctx: RequestContext, req: Req, next: Handle<Req, Res>): Promise<Res | null> | Res | null;
}

/** Typed for the API's own request and response; stored erased (as ApiRegistry stores handlers). */
export function guard<Req, Res>(apiKey: number, run: Guard<Req, Res>['run']): Guard<unknown, unknown> {
  return { apiKey, run } as unknown as Guard<unknown, unknown>;
}

/** A guard that needs one permission for the whole request, answered by `denied` otherwise. */
export function wholeRequest<Req, Res>(
  apiKey: number,
  allowed: (az: Authz, ctx: RequestContext, req: Req) => boolean,
  denied: (req: Req, ctx: RequestContext) => Res,
): Guard<unknown, unknown> {
  return guard<Req, Res>(apiKey, (az, ctx, req, next) => (allowed(az, ctx, req) ? next(ctx, req) : denied(req, ctx)));
}

/** Runs the handler on what is left, then puts the refused entries back in its answer. */
export async function serveRest<Req, Res>(ctx: RequestContext, rest: Req, next: Handle<Req, Res>, merge: (res: Res) => Res): Promise<Res | null> {
  const res = await next(ctx, rest);
  return res === null ? null : merge(res);
}
