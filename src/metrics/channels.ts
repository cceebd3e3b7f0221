/**
 * The diagnostics channels Fjord publishes on, and the message each carries. Publishers live in
 * rooms below this one (storage, fetcher, mirror), so they name the channel by its string and
 * publish only when `hasSubscribers` is true: with metrics off a publish point costs one property
 * read. This module is the one place the names and shapes are defined; the metrics room
 * subscribes. (Node's `diagnostics_channel`, as undici and fastify use it.)
 */
import { channel, type Channel } from 'node:diagnostics_channel';

export const CHANNEL = {
  /** A partition log's fsync finished (PartitionLog.syncNow), for the log flush latency histogram. */
  fsync: 'fjord:fsync',
  /** The mirror fetcher got a partition response without error from the source. */
  mirrorFetch: 'fjord:mirror-fetch',
  /** A mirror's periodic sync step failed (KIP-1279 §10, MirrorMetadataManager's *SyncError gauges). */
  mirrorSyncError: 'fjord:mirror-sync-error',
  /** A request was answered and its response handed to the socket (src/server/connection.ts). */
  requestTimes: 'fjord:request-times',
  /** A SASL authentication or re-authentication finished (src/server/sasl-authenticator.ts). */
  authentication: 'fjord:authentication',
} as const;

/** `fjord:authentication`. */
export interface AuthenticationMessage {
  /** The listener's name, e.g. SASL_PLAINTEXT. */
  readonly listener: string;
  readonly success: boolean;
  /** A KIP-368 re-authentication of an authenticated session. */
  readonly reauthentication: boolean;
}

/**
 * `fjord:request-times`: the timestamps of Kafka's RequestChannel.Request, in performance.now()
 * milliseconds. `remoteAt` is -1 when the handler never waited remotely; for acks=0 `sentAt`
 * equals `dequeuedAt` (no response is sent).
 */
export interface RequestTimesMessage {
  readonly apiKey: number;
  readonly apiVersion: number;
  /** The decoded request (read only to tell a follower's Fetch from a consumer's). */
  readonly request: unknown;
  /** The frame was complete (startTimeNanos). */
  readonly receivedAt: number;
  /** The handler started (requestDequeueTimeNanos). */
  readonly handlerStartAt: number;
  /** The handler started waiting on something else (apiLocalCompleteTimeNanos), or -1. */
  readonly remoteAt: number;
  /** The response was encoded (responseCompleteTimeNanos). */
  readonly completeAt: number;
  /** Its turn to be written came (responseDequeueTimeNanos). */
  readonly dequeuedAt: number;
  /** The socket took its last byte (the end of the request). */
  readonly sentAt: number;
}

/** `fjord:fsync`. */
export interface FsyncMessage {
  readonly durationMs: number;
}

/** `fjord:mirror-fetch`: `records` is the response's slice, read here by batch header only. */
export interface MirrorFetchMessage {
  readonly topic: string;
  readonly partition: number;
  readonly records: Buffer | null;
  readonly sourceHighWatermark: number;
}

/** The sync steps of spec §10 whose failures are counted, one label value each. */
export const MIRROR_SYNC_KINDS = ['topic_configs', 'group_offsets', 'acls', 'metadata_refresh'] as const;
type MirrorSyncKind = (typeof MIRROR_SYNC_KINDS)[number];

/** `fjord:mirror-sync-error`. */
export interface MirrorSyncErrorMessage {
  readonly mirror: string;
  readonly kind: MirrorSyncKind;
}

/** Subscribes `fn` to a channel; returns the unsubscribe. */
export function subscribe<T>(name: string, fn: (message: T) => void): () => void {
  const ch: Channel = channel(name);
  const listener = (m: unknown): void => fn(m as T);
  ch.subscribe(listener);
  return () => ch.unsubscribe(listener);
}
