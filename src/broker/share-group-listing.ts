/**
 * DeleteGroups over share groups too (KIP-932): the group coordinator's handler deletes classic,
 * consumer and streams groups, and this wrapper deletes the share groups held by the share group
 * coordinator, as Kafka's GroupCoordinatorService deletes every group type: an empty share group
 * goes with the state of its share-partitions (those held here and those its group coordinator
 * initialized); one with members is NON_EMPTY_GROUP.
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
          const initialized = share.coordinator.initializedPartitions(id);
          const errorCode = await share.coordinator.delete(id);
          if (errorCode === 0) {
            const held = share.partitions.sharePartitionsOf(id);
            for (const h of held) await share.partitions.deleteSharePartition(id, h.topicId, h.partition).catch(() => undefined);
            // Kafka's shareGroupBuildPartitionDeleteRequest: the state of every initialized partition goes too.
            for (const [topicId, ps] of initialized) {
              for (const p of ps) if (!held.some((h) => h.topicId === topicId && h.partition === p)) await share.persister.delete(id, topicId, p).catch(() => undefined);
            }
          }
          byId.set(id, { groupId: id, errorCode, ...(ctx.apiVersion >= 3 ? { errorMessage: null } : {}) });
        }
        return { ...inner, results: req.groupsNames.map((id) => byId.get(id) ?? { groupId: id, errorCode: 69 }) };
      },
    };
    handlers.set(DELETE_GROUPS, wrapped as ApiHandler);
  }
}
