/** Loopback port helpers and a minimal ApiVersions probe used to tell that a node is serving. */
import { createServer, Socket } from 'node:net';

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** `n` distinct free ports: all are held open together, so no two of them are the same port. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (srv) =>
          new Promise<number>((resolvePromise, reject) => {
            srv.once('error', reject);
            srv.listen(0, '127.0.0.1', () => {
              const addr = srv.address();
              resolvePromise(typeof addr === 'object' && addr !== null ? addr.port : 0);
            });
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((srv) => new Promise<void>((r) => (srv.listening ? srv.close(() => r()) : r()))));
  }
}

/**
 * Sends ApiVersions v0 (the one version every broker must answer, KIP-35) and resolves with the
 * response's error code, or rejects on a refused/closed connection or after `timeoutMs`.
 */
export function probeApiVersions(host: string, port: number, timeoutMs: number): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const clientId = Buffer.from('fjord-interop-probe');
    const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length);
    body.writeInt16BE(18, 0); // api key: ApiVersions
    body.writeInt16BE(0, 2); // api version 0
    body.writeInt32BE(7, 4); // correlation id
    body.writeInt16BE(clientId.length, 8);
    clientId.copy(body, 10);
    const frame = Buffer.alloc(4 + body.length);
    frame.writeInt32BE(body.length, 0);
    body.copy(frame, 4);

    const sock = new Socket();
    let buf = Buffer.alloc(0);
    const done = (err: Error | null, code?: number): void => {
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolvePromise(code ?? -1);
    };
    const timer = setTimeout(() => done(new Error(`ApiVersions got no answer in ${timeoutMs} ms`)), timeoutMs);
    sock.once('error', (e) => done(e));
    sock.once('close', () => done(new Error('connection closed before the ApiVersions response')));
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 4) return;
      const size = buf.readInt32BE(0);
      if (buf.length < 4 + size) return;
      if (size < 6 || buf.readInt32BE(4) !== 7) return done(new Error('malformed ApiVersions response'));
      done(null, buf.readInt16BE(8));
    });
    sock.connect(port, host, () => sock.write(frame));
  });
}

/** Polls until ApiVersions answers with error code 0, the process died, or the deadline passed. */
export async function waitServing(
  host: string,
  port: number,
  deadlineMs: number,
  alive: () => string | null,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let last = 'not tried';
  while (Date.now() < deadline) {
    const dead = alive();
    if (dead !== null) throw new Error(dead);
    try {
      const code = await probeApiVersions(host, port, 2000);
      if (code === 0) return;
      last = `ApiVersions error code ${code}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${host}:${port} not serving after ${deadlineMs} ms (${last})`);
}
