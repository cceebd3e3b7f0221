import type { ApiHandler } from '../broker/api-handler.js';
import type { GroupCoordinator } from './group-coordinator.js';

/** ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848). */
export function consumerGroupHandlers(_gc: GroupCoordinator): ApiHandler[] {
  return [];
}
