/**
 * How a connection orders the requests of each API before their handlers run. Kafka reads a
 * connection's next request only once the previous one is answered, so a client's pipelined
 * requests take effect in the order sent. Fjord runs a connection's requests side by side (a
 * long-polling Fetch does not hold up what follows it) and keeps the order only where a client
 * can tell:
 *
 * - `concurrent` (every API not listed): a handler starts as soon as its request is read.
 * - `in-order-until-admitted`: a handler starts only once the previous request of the same API on
 *   the connection has called `RequestContext.admitNext` or been answered. Produce admits the next
 *   once every append of it is queued on its log, so a producer's batches reach each log in the
 *   order sent, also behind a transaction check or a log still opening, while the writes and
 *   acknowledgements of pipelined requests still overlap.
 *
 * The policy belongs to the connection, not to the handler object: wrappers (authorization,
 * metrics) replace handlers but leave the API key and the request context as they are.
 */
import { ApiKey } from '../protocol/generated/api-table.js';

export type RequestOrdering = 'concurrent' | 'in-order-until-admitted';

const ORDERED: ReadonlyMap<number, RequestOrdering> = new Map([[ApiKey.Produce, 'in-order-until-admitted']]);

export function requestOrdering(apiKey: number): RequestOrdering {
  return ORDERED.get(apiKey) ?? 'concurrent';
}
