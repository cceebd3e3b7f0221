/**
 * The parts of a SCRAM exchange (RFC 5802) that both ends read the same way: the `a=value,...`
 * attribute list of a message and the XOR of the client proof. The server (scram-server.ts) and
 * the client (src/client/sasl-mechanisms.ts) each say in their own words what was wrong.
 */

/** The attributes of one SCRAM message by their one-letter name; `bad` names a malformed part. */
export function scramAttributes(message: string, bad: (part: string) => Error): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(',')) {
    if (part.length < 2 || part[1] !== '=') throw bad(part);
    out.set(part[0]!, part.slice(2));
  }
  return out;
}

export function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}
