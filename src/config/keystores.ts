/**
 * Key and trust material from Kafka's `ssl.keystore.*` / `ssl.truststore.*` keys, turned into
 * what node:tls takes. PKCS12 key stores go to OpenSSL as they are (`pfx`); JKS stores, and
 * PKCS12 trust stores (which hold certificates only, so OpenSSL's `pfx` loader refuses them), are
 * read with jks-js; PEM comes from the file or from the inline `certificate.chain` / `key` /
 * `certificates` keys (KIP-651). Like Java's keystore compatibility mode, a store declared JKS
 * that is really PKCS12 (keytool's default since Java 9), or the other way round, is read by its
 * content.
 */
import { readFileSync } from 'node:fs';
import { toPem } from 'jks-js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

/** What a store contributes to `tls.createSecureContext` options. */
interface KeyMaterial {
  readonly pfx?: Buffer;
  readonly passphrase?: string;
  readonly key?: string;
  readonly cert?: string;
}

export type StoreLookup = (key: string) => string | undefined;

const JKS_MAGIC = 0xfeedfeed;

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_CONFIG, message);
}

function readStore(location: string, what: string): Buffer {
  try {
    return readFileSync(location);
  } catch (err) {
    throw invalid(`cannot read ${what} ${location}: ${(err as Error).message}`);
  }
}

function isJks(bytes: Buffer): boolean {
  return bytes.length >= 4 && bytes.readUInt32BE(0) === JKS_MAGIC;
}

function parseJava(bytes: Buffer, password: string, keyPassword: string | undefined, what: string): ReturnType<typeof toPem> {
  try {
    return toPem(bytes, password, keyPassword);
  } catch (err) {
    throw invalid(`cannot read ${what} (wrong password or not a JKS/PKCS12 store): ${(err as Error).message}`);
  }
}

/** The files a reload watches: the key store and trust store locations that are set. */
export function storeFiles(get: StoreLookup): string[] {
  return [get('ssl.keystore.location'), get('ssl.truststore.location')].filter((f): f is string => !!f);
}

/** The node's certificate and private key; null when no key store is configured. */
export function loadKeyStore(get: StoreLookup): KeyMaterial | null {
  const type = (get('ssl.keystore.type') ?? 'JKS').toUpperCase();
  const location = get('ssl.keystore.location');
  const keyPassword = get('ssl.key.password');
  if (type === 'PEM') {
    const chain = get('ssl.keystore.certificate.chain');
    const inlineKey = get('ssl.keystore.key');
    if (chain && inlineKey) return { cert: chain, key: inlineKey, ...(keyPassword ? { passphrase: keyPassword } : {}) };
    if (!location) return null;
    const pem = readStore(location, 'ssl.keystore.location').toString('utf8');
    return { cert: pem, key: pem, ...(keyPassword ? { passphrase: keyPassword } : {}) };
  }
  if (type !== 'JKS' && type !== 'PKCS12') throw invalid(`ssl.keystore.type ${type} is not supported (JKS, PKCS12 or PEM)`);
  if (!location) return null;
  const password = get('ssl.keystore.password');
  if (password === undefined) throw invalid('ssl.keystore.password is required with ssl.keystore.location');
  const bytes = readStore(location, 'ssl.keystore.location');
  if (!isJks(bytes)) return { pfx: bytes, passphrase: password };
  const entries = Object.values(parseJava(bytes, password, keyPassword, 'ssl.keystore.location'));
  const entry = entries.find((e) => e.key && e.cert);
  if (!entry) throw invalid(`ssl.keystore.location ${location} holds no private key entry`);
  return { cert: entry.cert!, key: entry.key! };
}

/** The certificates client certificates are checked against; null for none configured. */
export function loadTrustStore(get: StoreLookup): string[] | null {
  const type = (get('ssl.truststore.type') ?? 'JKS').toUpperCase();
  const location = get('ssl.truststore.location');
  if (type === 'PEM') {
    const inline = get('ssl.truststore.certificates');
    if (inline) return [inline];
    return location ? [readStore(location, 'ssl.truststore.location').toString('utf8')] : null;
  }
  if (type !== 'JKS' && type !== 'PKCS12') throw invalid(`ssl.truststore.type ${type} is not supported (JKS, PKCS12 or PEM)`);
  if (!location) return null;
  const bytes = readStore(location, 'ssl.truststore.location');
  // Java lets a trust store be read without its password (integrity unchecked); jks-js needs one.
  const password = get('ssl.truststore.password') ?? '';
  const certs: string[] = [];
  for (const e of Object.values(parseJava(bytes, password, undefined, 'ssl.truststore.location'))) {
    if (e.ca) certs.push(e.ca);
    else if (e.cert) certs.push(e.cert);
  }
  if (certs.length === 0) throw invalid(`ssl.truststore.location ${location} holds no certificates`);
  return certs;
}
