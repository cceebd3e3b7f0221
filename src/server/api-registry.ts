/**
 * The table of API handlers this node serves. It answers the connection's dispatch, the header
 * versions of each (key, version), and builds the ApiVersions answer from what is registered, so
 * a version is advertised exactly when a handler serves it. Each key has one handler: a second
 * registration is refused at startup rather than silently replacing the first.
 */
import { API_TABLE } from '../protocol/generated/api-table.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { encodeApiVersionsResponse } from '../protocol/generated/messages/api-versions-response.js';
import { Writer } from '../protocol/writer.js';
import type { ApiHandler } from './api-handler.js';
import type { HeaderVersions } from './connection.js';

interface AdvertisedApi {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}

/**
 * Kafka 4 advertises Produce from v0 while rejecting v0-2 when sent (KAFKA-18659): librdkafka
 * before 2.11.1 only compresses when it sees Produce v0 in the range.
 */
const ADVERTISED_MIN_OVERRIDE: ReadonlyMap<number, number> = new Map([[0, 0]]);

export class ApiRegistry {
  readonly handlers = new Map<number, ApiHandler>();

  /**
   * Typed for the handler's own request and response; stored erased. The erasure is safe because
   * the connection only ever hands a handler the value its own `decode` returned, and encodes only
   * what its own `handle` returned (the contract of ApiHandler).
   */
  register<Req, Res>(h: ApiHandler<Req, Res>): void {
    const info = API_TABLE[h.apiKey];
    if (!info) throw new Error(`no schema for api key ${h.apiKey}`);
    if (h.minVersion < info.minVersion || h.maxVersion > info.maxVersion) {
      throw new Error(`handler for ${info.name} claims v${h.minVersion}-${h.maxVersion}, codecs cover v${info.minVersion}-${info.maxVersion}`);
    }
    if (this.handlers.has(h.apiKey)) throw new Error(`${info.name} (api key ${h.apiKey}) is registered twice`);
    this.handlers.set(h.apiKey, h);
  }

  registerAll(hs: Iterable<ApiHandler>): void {
    for (const h of hs) this.register(h);
  }

  advertised(): AdvertisedApi[] {
    return [...this.handlers.values()]
      .map((h) => ({ apiKey: h.apiKey, minVersion: ADVERTISED_MIN_OVERRIDE.get(h.apiKey) ?? h.minVersion, maxVersion: h.maxVersion }))
      .sort((a, b) => a.apiKey - b.apiKey);
  }

  readonly headers: HeaderVersions = {
    request: (apiKey, version) => API_TABLE[apiKey]?.requestHeaderVersion(version) ?? 1,
    response: (apiKey, version) => API_TABLE[apiKey]?.responseHeaderVersion(version) ?? 0,
  };

  /** KIP-511 reply to an ApiVersions version we do not serve: v0 body, UNSUPPORTED_VERSION. */
  unsupportedApiVersionsBody(): Buffer {
    const h = this.handlers.get(18);
    const w = new Writer(64);
    encodeApiVersionsResponse(
      w,
      { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: [{ apiKey: 18, minVersion: h?.minVersion ?? 0, maxVersion: h?.maxVersion ?? 0 }] },
      0,
    );
    return w.toBuffer();
  }
}
