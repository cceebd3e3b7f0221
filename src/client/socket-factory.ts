/**
 * How a client connection gets its byte stream. The connection never opens sockets itself: it is
 * handed a `SocketFactory`, so the transport (TCP for PLAINTEXT and SASL_PLAINTEXT, TLS for SSL and SASL_SSL)
 * is chosen in one place, by whoever builds the client, the way Kafka's `ChannelBuilder` picks the
 * transport layer for a `Selector`.
 *
 * A factory resolves once the stream is ready to carry Kafka frames (TCP connected, or the TLS
 * handshake done) and rejects with NETWORK_EXCEPTION when it cannot get there within the
 * connection setup timeout (socket.connection.setup.timeout.ms).
 */
import net from 'node:net';
import tls from 'node:tls';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

export interface BrokerAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Reads the caller wants written straight into its own buffers (`net.Socket`'s `onread`): the
 * kernel writes into `buffer()`, then `received(n)` is called. A socket given one emits no 'data'.
 */
interface DirectReads {
  buffer(): Uint8Array;
  received(bytes: number): void;
}

/**
 * `direct` is a wish: a transport that can read into the caller's buffers (TCP) does, one that
 * cannot (TLS, which decrypts into its own) emits 'data' as usual.
 */
export type SocketFactory = (address: BrokerAddress, setupTimeoutMs: number, direct?: DirectReads) => Promise<net.Socket>;

function open(address: BrokerAddress, setupTimeoutMs: number, create: () => net.Socket, readyEvent: 'connect' | 'secureConnect'): Promise<net.Socket> {
  const where = `${address.host}:${address.port}`;
  return new Promise<net.Socket>((resolve, reject) => {
    const s = create();
    const timer = setTimeout(() => {
      s.destroy();
      reject(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${where}: connect timed out after ${setupTimeoutMs} ms`));
    }, setupTimeoutMs);
    s.once(readyEvent, () => {
      clearTimeout(timer);
      s.removeAllListeners('error');
      resolve(s);
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${where}: ${err.message}`));
    });
  });
}

/** security.protocol=PLAINTEXT: a bare TCP connection. */
export const plaintextSockets: SocketFactory = (address, setupTimeoutMs, direct) => {
  const onread =
    direct === undefined
      ? {}
      : {
          onread: {
            buffer: () => direct.buffer(),
            callback: (n: number): boolean => {
              direct.received(n);
              return true;
            },
          },
        };
  return open(address, setupTimeoutMs, () => net.connect({ host: address.host, port: address.port, ...onread }), 'connect');
};

/** security.protocol=SSL: TLS over TCP; the server name defaults to the broker's host. */
export function tlsSockets(options: tls.ConnectionOptions): SocketFactory {
  return (address, setupTimeoutMs) =>
    open(
      address,
      setupTimeoutMs,
      // SNI carries host names only (RFC 6066 §3): a broker addressed by IP is verified by its IP SAN.
      () => tls.connect({ ...options, host: address.host, port: address.port, ...(net.isIP(address.host) === 0 ? { servername: options.servername ?? address.host } : {}) }),
      'secureConnect',
    );
}
