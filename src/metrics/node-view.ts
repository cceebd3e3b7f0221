/**
 * What the metrics and the status page read from the node, filled in by the node
 * (src/broker/node.ts) so this room depends on types only. Everything else is read through the
 * node's own API handlers, called in-process with the same request objects a client would send
 * (Metadata, ListGroups, OffsetFetch, ListTransactions, ListClusterMirrors,
 * DescribeClusterMirrors): the answers are exactly what `fjord cluster-mirrors --describe` or
 * an admin client sees, and nothing here depends on how src/mirror or src/coordinator are built
 * inside.
 *
 * Concurrency contract: called on the node's event loop, at scrape or page-load time only.
 */
import type { SaslMechanism } from '../auth/sasl-mechanism.js';
import type { MetadataListener } from '../controller/controller.js';
import type { MetadataImage } from '../controller/metadata-image.js';
import type { ApiHandler, RequestContext } from '../server/api-handler.js';
import type { PartitionLog } from '../storage/partition-log.js';

export interface NodeView {
  readonly nodeId: number;
  readonly clusterId: string;
  /** The advertised address clients use. */
  readonly advertised: () => string;
  readonly image: MetadataImage;
  /** The partition's log when it is hosted here. */
  log(topic: string, partition: number): PartitionLog | undefined;
  /** The node's handler table (uninstrumented, so page loads are not counted as client requests). */
  readonly handlers: ReadonlyMap<number, ApiHandler>;
  /** Subscribes to applied metadata changes (the controller's onChange); returns the unsubscribe. */
  onMetadataChange(listener: MetadataListener): () => void;
  /**
   * The SASL mechanisms of the node's SASL listeners (empty: no SASL listener, the pages are
   * open); null until the listeners are open.
   */
  saslMechanisms(): readonly SaslMechanism[] | null;
  /**
   * With `authorizer.class.name` set: whether a logged-in principal may DESCRIBE the cluster,
   * which the status pages ask of their users as Kafka's DescribeCluster does; absent without an
   * authorizer.
   */
  readonly mayDescribeCluster?: ((principal: string, clientAddress: string) => boolean) | undefined;
}

const signal = new AbortController().signal;

/**
 * Calls the node's handler for `apiKey` at `version` with a decoded request; null when the node
 * does not serve that version. The principal is the anonymous one, as on a PLAINTEXT listener.
 */
export async function callHandler<Res>(view: NodeView, apiKey: number, version: number, req: unknown): Promise<Res | null> {
  const h = view.handlers.get(apiKey);
  if (h === undefined || version < h.minVersion || version > h.maxVersion) return null;
  const ctx: RequestContext = {
    apiKey,
    apiVersion: version,
    correlationId: 0,
    clientId: 'fjord-status',
    connectionId: 'fjord-status',
    principal: 'User:ANONYMOUS',
    clientAddress: '127.0.0.1:0',
    signal,
  };
  return (await h.handle(ctx, req)) as Res | null;
}
