/** The API registry: one handler per key, and on a real node the InitProducerId that survives. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { decodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { encodeApiVersionsRequest } from '../../src/protocol/generated/messages/api-versions-request.js';
import { decodeInitProducerIdRequest, encodeInitProducerIdRequest } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse, encodeInitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import type { ApiHandler } from '../../src/server/api-handler.js';
import { ApiRegistry } from '../../src/server/api-registry.js';
import { WireClient } from '../broker/wire.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const initProducerId = (epoch: number): ApiHandler => ({
  apiKey: 22,
  minVersion: 0,
  maxVersion: 5,
  decode: decodeInitProducerIdRequest,
  encode: encodeInitProducerIdResponse,
  handle: () => ({ errorCode: ErrorCode.NONE, producerId: 1n, producerEpoch: epoch }),
});

describe('ApiRegistry', () => {
  it('refuses a second handler for the same api key and keeps the first', () => {
    const registry = new ApiRegistry();
    const first = initProducerId(0);
    registry.register(first);
    expect(() => registry.register(initProducerId(1))).toThrow(/InitProducerId \(api key 22\) is registered twice/);
    expect(() => registry.registerAll([initProducerId(2)])).toThrow(/registered twice/);
    expect(registry.handlers.get(22)).toBe(first);
    expect(registry.advertised()).toEqual([{ apiKey: 22, minVersion: 0, maxVersion: 5 }]);
  });

  it('refuses a handler claiming versions its codecs do not cover', () => {
    expect(() => new ApiRegistry().register({ ...initProducerId(0), maxVersion: 99 })).toThrow(/claims v0-99/);
  });
});

describe('InitProducerId on a node', () => {
  let node: RunningNode;
  let c: WireClient;
  beforeAll(async () => {
    node = await startNode();
    c = await WireClient.connect(node.port);
  }, 120_000);
  afterAll(async () => {
    c?.close();
    await node?.destroy();
  });

  const init = async (transactionalId: string | null) =>
    decodeInitProducerIdResponse(
      await c.call(22, 4, (w) => encodeInitProducerIdRequest(w, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, 4)),
      4,
    );

  it('is the transaction coordinator’s: a transactional id gets an id, and again with a bumped epoch', async () => {
    const a = await init('registry-tx');
    expect(a.errorCode).toBe(ErrorCode.NONE);
    expect(a.producerId).toBeGreaterThanOrEqual(0n);
    const b = await init('registry-tx');
    expect(b.errorCode).toBe(ErrorCode.NONE);
    expect(b.producerId).toBe(a.producerId);
    expect(b.producerEpoch).toBe(a.producerEpoch + 1);
  });

  it('gives an idempotent producer (null transactional id) a fresh id each time', async () => {
    const a = await init(null);
    const b = await init(null);
    expect([a.errorCode, b.errorCode]).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    expect(b.producerId).not.toBe(a.producerId);
    expect(a.producerEpoch).toBe(0);
  });

  it('advertises InitProducerId once, v0-5', async () => {
    const r = decodeApiVersionsResponse(await c.call(18, 3, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'fjord-test', clientSoftwareVersion: '1' }, 3)), 3);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.apiKeys.filter((k) => k.apiKey === 22)).toEqual([expect.objectContaining({ apiKey: 22, minVersion: 0, maxVersion: 5 })]);
  });
});
