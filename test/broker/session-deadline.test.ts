/**
 * A request read after a classic member's session deadline sees the member expired, even when the
 * broker's event loop gets to it before the late session timer (libuv polls I/O before it runs
 * timers, so a node that was busy or not scheduled at the deadline reads the request first).
 *
 * librdkafka's 0081 (DescribeConsumerGroups) closes static members, which leave no LeaveGroup
 * behind, sleeps one session timeout and deletes their groups: on a loaded machine Fjord answered
 * NON_EMPTY_GROUP because the expiry came after the DeleteGroups it should have preceded.
 *
 * The node runs in this process, so the test can hold its event loop past the deadline (as a
 * loaded machine does) with the request already in the node's socket; the client is raw TCP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeDeleteGroupsRequest } from '../../src/protocol/generated/messages/delete-groups-request.js';
import { decodeDeleteGroupsResponse } from '../../src/protocol/generated/messages/delete-groups-response.js';
import { encodeDescribeGroupsRequest } from '../../src/protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse } from '../../src/protocol/generated/messages/describe-groups-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse } from '../../src/protocol/generated/messages/find-coordinator-response.js';
import { encodeJoinGroupRequest } from '../../src/protocol/generated/messages/join-group-request.js';
import { decodeJoinGroupResponse } from '../../src/protocol/generated/messages/join-group-response.js';
import { encodeSyncGroupRequest } from '../../src/protocol/generated/messages/sync-group-request.js';
import { decodeSyncGroupResponse } from '../../src/protocol/generated/messages/sync-group-response.js';
import { Reader } from '../../src/protocol/reader.js';
import type { Writer } from '../../src/protocol/writer.js';
import { lastAnswer } from '../helpers/wait.js';
import { startSecureNode, type SecureNode } from '../server/secure-node.js';
import { WireClient } from './wire.js';

const SESSION_MS = 500;

let node: SecureNode;
let c: WireClient;

beforeAll(async () => {
  node = await startSecureNode({ listeners: 'PLAINTEXT://127.0.0.1:0', 'group.min.session.timeout.ms': String(SESSION_MS) });
  c = await WireClient.connect(node.port('PLAINTEXT'));
});

afterAll(async () => {
  c?.close();
  await node?.close();
});

/**
 * A static member joins `group` and gets its assignment; like librdkafka closing a consumer with
 * group.instance.id, it then goes away without LeaveGroup. Returns when its session was last
 * renewed at the latest (the SyncGroup answer).
 */
async function joinStaticMember(group: string): Promise<number> {
  await lastAnswer(
    async () => decodeFindCoordinatorResponse(await c.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType: 0, coordinatorKeys: [group] }, 4)), 4),
    (r) => r.coordinators[0]?.errorCode === ErrorCode.NONE,
  );
  const join = await lastAnswer(
    async () =>
      decodeJoinGroupResponse(
        await c.call(11, 5, (w) =>
          encodeJoinGroupRequest(
            w,
            { groupId: group, sessionTimeoutMs: SESSION_MS, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: 'instance-0', protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }] },
            5,
          ),
        ),
        5,
      ),
    (r) => r.errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  );
  expect(join.errorCode).toBe(ErrorCode.NONE);
  const sync = decodeSyncGroupResponse(
    await c.call(14, 3, (w) =>
      encodeSyncGroupRequest(w, { groupId: group, generationId: join.generationId, memberId: join.memberId, groupInstanceId: 'instance-0', assignments: [{ memberId: join.memberId, assignment: Buffer.alloc(0) }] }, 3),
    ),
    3,
  );
  expect(sync.errorCode).toBe(ErrorCode.NONE);
  return Date.now();
}

/**
 * Writes a request into the node's socket, then holds this process's event loop (the node's too)
 * until the member's session deadline has passed, from inside a timer callback: when the loop
 * resumes it polls the socket before it runs the now overdue session timer. Only versions with a
 * v0 response header (no tagged fields) are sent this way.
 */
async function sendLate(apiKey: number, version: number, body: (w: Writer) => void, renewedAt: number): Promise<Reader> {
  const frame = c.frame(apiKey, version, body);
  const response = c.next();
  await new Promise<void>((resolve) =>
    setTimeout(() => {
      c.write(frame);
      const overdue = renewedAt + SESSION_MS + 200 - Date.now();
      if (overdue > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, overdue);
      resolve();
    }, 0),
  );
  return new Reader((await response).body);
}

describe('a classic member past its session deadline', () => {
  it('is gone for a DeleteGroups the node reads before its session timer runs', async () => {
    const group = 'late-timer-delete';
    const renewedAt = await joinStaticMember(group);
    const r = decodeDeleteGroupsResponse(await sendLate(42, 1, (w) => encodeDeleteGroupsRequest(w, { groupsNames: [group] }, 1), renewedAt), 1);
    expect(r.results.map((g) => [g.groupId, g.errorCode])).toEqual([[group, ErrorCode.NONE]]);
  });

  it('is gone for a DescribeGroups the node reads before its session timer runs', async () => {
    const group = 'late-timer-describe';
    const renewedAt = await joinStaticMember(group);
    const r = decodeDescribeGroupsResponse(await sendLate(15, 4, (w) => encodeDescribeGroupsRequest(w, { groups: [group], includeAuthorizedOperations: false }, 4), renewedAt), 4);
    expect(r.groups.map((g) => [g.groupId, g.errorCode, g.groupState, g.members.length])).toEqual([[group, ErrorCode.NONE, 'Empty', 0]]);
  });
});
