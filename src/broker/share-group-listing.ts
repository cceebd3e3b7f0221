/**
 * DeleteGroups over share groups too (KIP-932): the group coordinator's handler deletes classic,
 * consumer and streams groups, and this wrapper deletes the share groups held by the share group
 * coordinator, as Kafka's GroupCoordinatorService deletes every group type: an empty share group
 * goes with its share-partition state; one with members is NON_EMPTY_GROUP.
 *
 * ListGroups needs no wrapper: each __consumer_offsets shard lists the share groups its records
 * hold (GroupShard.listGroups), loaded in memory or not.
 */
import type { DeleteGroupsRequest } from '../protocol/generated/messages/delete-groups-request.js';
import type { DeleteGroupsResponseInput } from '../protocol/generated/messages/delete-groups-response.js';
import type { ApiHandler } from '../server/api-handler.js';
import type { ShareGroups } from './share-wiring.js';

const DELETE_GROUPS = 42;

export function wrapGroupDeletion(handlers: Map<number, ApiHandler>, share: ShareGroups): void {
  const del = handlers.get(DELETE_GROUPS) as ApiHandler<DeleteGroupsRequest, DeleteGroupsResponseInput> | undefined;
  if (del !== undefined) {
    const wrapped: ApiHandler<DeleteGroupsRequest, DeleteGroupsResponseInput> = {
      ...del,
      async handle(ctx, req) {
        const known = await Promise.all(req.groupsNames.map(async (id) => (await share.coordinator.find(id)) !== undefined));
        const shareIds = req.groupsNames.filter((_, i) => known[i]);
        const others = req.groupsNames.filter((_, i) => !known[i]);
        const inner = others.length > 0 ? await del.handle(ctx, { ...req, groupsNames: others }) : { results: [] };
        const byId = new Map((inner?.results ?? []).map((r) => [r.groupId, r] as const));
        for (const id of shareIds) {
          const errorCode = await share.coordinator.delete(id);
          if (errorCode === 0) for (const h of share.partitions.sharePartitionsOf(id)) await share.partitions.deleteSharePartition(id, h.topicId, h.partition).catch(() => undefined);
          byId.set(id, { groupId: id, errorCode, ...(ctx.apiVersion >= 3 ? { errorMessage: null } : {}) });
        }
        return { ...inner, results: req.groupsNames.map((id) => byId.get(id) ?? { groupId: id, errorCode: 69 }) };
      },
    };
    handlers.set(DELETE_GROUPS, wrapped as ApiHandler);
  }
}
