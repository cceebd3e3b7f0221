/**
 * The node's client quotas (Kafka's QuotaFactory.QuotaManagers): produce and fetch bandwidth
 * (`producer_byte_rate`, `consumer_byte_rate`), request time (`request_percentage`) and the
 * controller mutation rate (`controller_mutation_rate`), each by user / client id / both /
 * defaults, over `quota.window.num` windows of `quota.window.size.seconds`
 * (`controller.quota.window.*` for mutations).
 *
 * What a throttled client sees is KIP-219's: the response comes at once with `throttle_time_ms`,
 * and the connection is then not read until that time has passed (`RequestContext.throttle`).
 *
 * Concurrency contract: used from the node's one event loop only.
 */
import { ApiKey } from '../protocol/generated/api-table.js';
import type { RequestContext } from '../server/api-handler.js';
import { ClientQuotaManager, QuotaLimits, type QuotaClient, type QuotaSource } from './client-quota-manager.js';
import { ControllerMutationQuotaManager, type ControllerMutationQuota } from './controller-mutation-quota.js';
import type { QuotaWindow } from './sampled-rate.js';

export interface QuotaConfig {
  get(key: string): string | undefined;
}

/** Kafka's ClientQuotaManager.NanosToPercentagePerSecond: a thread busy for one second is 100%. */
const NANOS_TO_PERCENTAGE = 100 / 1e9;

/**
 * Requests the request quota does not count (Kafka exempts cluster actions, and the SASL
 * exchange happens before a client has a principal to count against).
 */
const REQUEST_QUOTA_EXEMPT: ReadonlySet<number> = new Set([
  ApiKey.SaslHandshake,
  ApiKey.SaslAuthenticate,
  ApiKey.ReadMirrorStates,
  ApiKey.WriteMirrorStates,
  ApiKey.BumpLeaderEpochs,
]);

function windowOf(cfg: QuotaConfig, numKey: string, sizeKey: string): QuotaWindow {
  const samples = Number(cfg.get(numKey) ?? '11');
  const seconds = Number(cfg.get(sizeKey) ?? '1');
  return { samples: Math.max(1, Math.trunc(samples)), windowMs: Math.max(1, seconds) * 1000 };
}

export class BrokerQuotas {
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientQuotaManager;
  readonly controllerMutation: ControllerMutationQuotaManager;

  constructor(
    source: QuotaSource,
    cfg: QuotaConfig,
    private readonly now: () => number = Date.now,
  ) {
    const client = windowOf(cfg, 'quota.window.num', 'quota.window.size.seconds');
    const controller = windowOf(cfg, 'controller.quota.window.num', 'controller.quota.window.size.seconds');
    this.produce = new ClientQuotaManager(new QuotaLimits(source, 'producer_byte_rate'), client);
    this.fetch = new ClientQuotaManager(new QuotaLimits(source, 'consumer_byte_rate'), client);
    // Kafka's ClientRequestQuotaManager caps the request throttle at one window.
    this.request = new ClientQuotaManager(new QuotaLimits(source, 'request_percentage'), client, client.windowMs);
    this.controllerMutation = new ControllerMutationQuotaManager(new QuotaLimits(source, 'controller_mutation_rate'), controller);
  }

  /**
   * Records a produce request's size (Kafka counts the whole request) and mutes the connection
   * for the throttle time; returns the throttle time for the response.
   */
  throttleProduce(rc: RequestContext): number {
    const ms = this.produce.recordAndGetThrottleTimeMs(rc, rc.requestBytes ?? 0, this.now());
    rc.throttle?.(ms);
    return ms;
  }

  /** The most a consumer's fetch may return now (Kafka limits fetch.max.bytes by the quota window). */
  fetchMaxBytes(rc: RequestContext, requested: number): number {
    return Math.max(1, Math.min(requested, Math.floor(this.fetch.maxValueInQuotaWindow(rc))));
  }

  /** Records a consumer fetch response's size and mutes the connection for the throttle time. */
  throttleFetch(rc: RequestContext, responseBytes: number): number {
    const ms = this.fetch.recordAndGetThrottleTimeMs(rc, responseBytes, this.now());
    rc.throttle?.(ms);
    return ms;
  }

  /**
   * The request quota's throttle for a request that kept the event loop busy `nanos`
   * (Kafka's ClientRequestQuotaManager, request handler time as a percentage of one thread).
   */
  requestThrottleMs(client: QuotaClient, apiKey: number, nanos: number): number {
    if (REQUEST_QUOTA_EXEMPT.has(apiKey)) return 0;
    return this.request.recordAndGetThrottleTimeMs(client, nanos * NANOS_TO_PERCENTAGE, this.now());
  }

  /** The controller mutation quota of one CreateTopics / CreatePartitions / DeleteTopics request. */
  mutationQuota(rc: RequestContext, strict: boolean): ControllerMutationQuota {
    return this.controllerMutation.newQuota(rc, strict, this.now);
  }

  /** Mutes the connection for the request's mutation throttle and returns it for the response. */
  throttleMutations(rc: RequestContext, quota: ControllerMutationQuota): number {
    rc.throttle?.(quota.throttleTimeMs);
    return quota.throttleTimeMs;
  }
}

/** The message of Kafka's ThrottlingQuotaExceededException, for a topic the mutation quota refused. */
export const THROTTLING_QUOTA_EXCEEDED_MESSAGE = 'The throttling quota has been exceeded.';

export type { ControllerMutationQuota };
