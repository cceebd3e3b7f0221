/**
 * ListGroups and DeleteGroups over share groups too (KIP-932): the group coordinator's handlers
 * answer classic and consumer groups, and these wrappers add the share groups held by the share
 * group coordinator, as Kafka's GroupCoordinatorService lists and deletes every group type.
 *
 * - ListGroups lists a share group with protocol type "share", group type "share" and state
 *   Empty or Stable; the v4 states and v5 types filters apply, case-insensitively.
 * - DeleteGroups deletes an empty share group with its share-partition state; one with members
 *   is NON_EMPTY_GROUP.
 */
import type { DeleteGroupsRequest } from '../protocol/generated/messages/delete-groups-request.js';
import type { DeleteGroupsResponseInput } from '../protocol/generated/messages/delete-groups-response.js';
import type { ListGroupsRequest } from '../protocol/generated/messages/list-groups-request.js';
import type { ListGroupsResponseInput } from '../protocol/generated/messages/list-groups-response.js';
import type { ApiHandler } from '../server/api-handler.js';
import type { ShareGroups } from './share-wiring.js';

const LIST_GROUPS = 16;
const DELETE_GROUPS = 42;

export function wrapGroupListing(handlers: Map<number, ApiHandler>, share: ShareGroups): void {
  const list = handlers.get(LIST_GROUPS) as ApiHandler<ListGroupsRequest, ListGroupsResponseInput> | undefined;
  if (list !== undefined) {
    const wrapped: ApiHandler<ListGroupsRequest, ListGroupsResponseInput> = {
      ...list,
      async handle(ctx, req) {
        const inner = await list.handle(ctx, req);
        if (inner === null || (inner.errorCode ?? 0) !== 0) return inner;
        const v = ctx.apiVersion;
        const states = new Set((v >= 4 ? req.statesFilter : []).map((s) => s.toLowerCase()));
        const types = new Set((v >= 5 ? req.typesFilter : []).map((s) => s.toLowerCase()));
        if (types.size > 0 && !types.has('share')) return inner;
        const shareGroups = [...share.coordinator.groups.values()]
          .map((g) => ({ groupId: g.groupId, protocolType: 'share', groupState: g.members.size > 0 ? 'Stable' : 'Empty', groupType: 'share' }))
          .filter((g) => states.size === 0 || states.has(g.groupState.toLowerCase()))
          .map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, ...(v >= 4 ? { groupState: g.groupState } : {}), ...(v >= 5 ? { groupType: g.groupType } : {}) }));
        const groups = [...(inner.groups ?? []), ...shareGroups].sort((a, b) => ((a.groupId ?? '') < (b.groupId ?? '') ? -1 : 1));
        return { ...inner, groups };
      },
    };
    handlers.set(LIST_GROUPS, wrapped as ApiHandler);
  }
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
