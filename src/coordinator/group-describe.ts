/**
 * What the describe requests of the KIP-848 group types (ConsumerGroupDescribe,
 * ShareGroupDescribe, StreamsGroupDescribe) answer alike: one entry per requested id, a missing
 * group as GROUP_ID_NOT_FOUND in state Dead with Kafka's message, and the authorized-operations
 * field. Kafka's GroupCoordinatorService answers each id on its own, so a failure on one group
 * is that group's error code, not the request's.
 */
import { AUTHORIZED_OPERATIONS_OMITTED } from '../auth/acl-model.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { GROUP_OPERATIONS } from './group-operations.js';

interface DescribedGroupError {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly groupId: string;
}

/** `describe` of every id, concurrently; what one throws becomes that group's error code. */
export function describeEachGroup<T>(groupIds: readonly string[], describe: (groupId: string) => Promise<T>): Promise<(T | DescribedGroupError)[]> {
  return Promise.all(
    groupIds.map(async (groupId) => {
      try {
        return await describe(groupId);
      } catch (e) {
        return { errorCode: errorCodeOf(e), errorMessage: null, groupId };
      }
    }),
  );
}

/**
 * A group that is not there ("Group X not found."), or, with `wantedType` (e.g. "consumer"), one
 * whose id a group of another type holds ("Group X is not a consumer group."), as Kafka's
 * GroupMetadataManager says.
 */
export function groupNotFound(groupId: string, wantedType: string | null): DescribedGroupError & { readonly groupState: 'Dead' } {
  return {
    errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
    errorMessage: wantedType !== null ? `Group ${groupId} is not a ${wantedType} group.` : `Group ${groupId} not found.`,
    groupId,
    groupState: 'Dead',
  };
}

/** The authorized-operations field: every group operation when asked for, else the "omitted" value. */
export function groupAuthorizedOperations(includeAuthorizedOperations: boolean): number {
  return includeAuthorizedOperations ? GROUP_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED;
}
