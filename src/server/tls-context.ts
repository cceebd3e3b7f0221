/**
 * The TLS side of an SSL or SASL_SSL listener (Kafka's SslFactory / DefaultSslEngineFactory):
 * key and trust stores, `ssl.client.auth`, `ssl.enabled.protocols`, `ssl.cipher.suites`, the
 * principal of a client certificate, and reloading the stores when their files change or when an
 * AlterConfigs changes the listener's `listener.name.<l>.ssl.keystore.*` / `ssl.truststore.*`
 * keys (Kafka's SslFactory.reconfigure): new connections get the new certificate, connections
 * already open keep theirs, and stores that do not load are refused with the old ones kept.
 */
import { X509Certificate } from 'node:crypto';
import { statSync, unwatchFile, watchFile } from 'node:fs';
import { Socket } from 'node:net';
import { TLSSocket, createSecureContext, type SecureContextOptions, type TlsOptions } from 'node:tls';
import type { Logger } from '../common/logger.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { SslPrincipalMapper, rfc2253 } from '../auth/ssl-principal-mapper.js';
import { loadKeyStore, loadTrustStore, storeFiles, type StoreLookup } from '../config/keystores.js';

/** ssl.client.auth */
type SslClientAuth = 'required' | 'requested' | 'none';

const TLS_VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
type TlsVersion = (typeof TLS_VERSIONS)[number];

/** How often a key or trust store file is checked for a change. */
const STORE_POLL_MS = 1000;

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_CONFIG, message);
}

/**
 * A Java (IANA) cipher suite name in OpenSSL's spelling: `TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384`
 * is `ECDHE-RSA-AES256-GCM-SHA384`. TLS 1.3 suites and names already in OpenSSL's form pass as
 * they are; OpenSSL rejects what it does not know when the context is made.
 */
export function opensslCipherName(name: string): string {
  const m = /^(?:TLS|SSL)_(.+)_WITH_(.+)$/.exec(name);
  if (!m) return name;
  const kx = m[1] === 'RSA' ? '' : `${m[1]!.replace(/_/g, '-')}-`;
  const cipher = m[2]!
    .replace(/^AES_(\d+)_/, 'AES$1-')
    .replace(/^CHACHA20_POLY1305_SHA256$/, 'CHACHA20-POLY1305')
    .replace(/_CBC_SHA$/, '-SHA')
    .replace(/-CBC_/, '-')
    .replace(/^(AES\d+)-CBC-/, '$1-')
    .replace(/_/g, '-');
  return `${kx}${cipher}`.replace(/-CBC-SHA(\d*)$/, '-SHA$1');
}

function protocolRange(enabled: string): { minVersion: TlsVersion; maxVersion: TlsVersion } {
  const versions = enabled.split(',').map((s) => s.trim()).filter(Boolean);
  const idx = versions.map((v) => {
    const i = (TLS_VERSIONS as readonly string[]).indexOf(v);
    if (i < 0) throw invalid(`ssl.enabled.protocols: '${v}' is not a TLS protocol version (${TLS_VERSIONS.join(', ')})`);
    return i;
  });
  if (idx.length === 0) throw invalid('ssl.enabled.protocols must name at least one protocol');
  return { minVersion: TLS_VERSIONS[Math.min(...idx)]!, maxVersion: TLS_VERSIONS[Math.max(...idx)]! };
}

export class TlsServerContext {
  private files: string[];
  private readonly mtimes = new Map<string, number>();
  private watching = false;
  private apply: ((options: TlsOptions) => void) | null = null;
  private handshakeTimeoutMs = 0;

  private constructor(
    private readonly listener: string,
    private get: StoreLookup,
    readonly clientAuth: SslClientAuth,
    private readonly mapper: SslPrincipalMapper,
    private current: SecureContextOptions,
    private readonly log: Logger,
  ) {
    this.files = storeFiles(get);
  }

  /** Reads and checks the listener's TLS settings; throws INVALID_CONFIG naming what is wrong. */
  static load(listener: string, get: StoreLookup, clientAuthValue: string | undefined, log: Logger): TlsServerContext {
    const clientAuth = (clientAuthValue ?? 'none').toLowerCase();
    if (clientAuth !== 'required' && clientAuth !== 'requested' && clientAuth !== 'none') {
      throw invalid(`ssl.client.auth must be required, requested or none, got '${clientAuthValue}'`);
    }
    const mapper = SslPrincipalMapper.parse(get('ssl.principal.mapping.rules'));
    const options = TlsServerContext.secureOptions(listener, get, clientAuth);
    return new TlsServerContext(listener, get, clientAuth, mapper, options, log);
  }

  private static secureOptions(listener: string, get: StoreLookup, clientAuth: SslClientAuth): SecureContextOptions {
    const key = loadKeyStore(get);
    if (!key) {
      throw invalid(
        `listener ${listener} serves TLS but has no key store: set ssl.keystore.location (with ssl.keystore.password) or, ` +
          'with ssl.keystore.type=PEM, ssl.keystore.certificate.chain and ssl.keystore.key',
      );
    }
    const ca = loadTrustStore(get);
    if (clientAuth !== 'none' && !ca) {
      throw invalid(`listener ${listener} has ssl.client.auth=${clientAuth} but no trust store: set ssl.truststore.location`);
    }
    const ciphers = get('ssl.cipher.suites');
    const options: SecureContextOptions = {
      ...key,
      ...(ca ? { ca } : {}),
      ...protocolRange(get('ssl.enabled.protocols') ?? 'TLSv1.2,TLSv1.3'),
      ...(ciphers ? { ciphers: ciphers.split(',').map((c) => opensslCipherName(c.trim())).filter(Boolean).join(':') } : {}),
    };
    try {
      createSecureContext(options);
    } catch (err) {
      throw invalid(`listener ${listener}: the TLS settings are not usable: ${(err as Error).message}`);
    }
    return options;
  }

  /** Options for `tls.createServer`. */
  serverOptions(handshakeTimeoutMs: number): TlsOptions {
    return {
      ...this.current,
      requestCert: this.clientAuth !== 'none',
      // `requested` accepts a client without a certificate; a presented one is still checked
      // (principalOf refuses an unverified certificate), as a Java SSLEngine with wantClientAuth does.
      rejectUnauthorized: this.clientAuth === 'required',
      handshakeTimeout: handshakeTimeoutMs,
    };
  }

  /**
   * The principal of a client's certificate (`User:<mapped subject>`); `User:ANONYMOUS` without
   * one; null when a certificate was presented that the trust store does not verify.
   */
  principalOf(socket: TLSSocket): string | null {
    const peer = socket.getPeerCertificate();
    if (!peer || !peer.raw) return 'User:ANONYMOUS';
    if (!socket.authorized) return null;
    const subject = new X509Certificate(peer.raw).subject;
    return `User:${this.mapper.name(rfc2253(subject))}`;
  }

  /**
   * Throws INVALID_CONFIG, naming what is wrong, when the stores `get` names do not load, or when
   * their certificate changes the subject or subject alternative names that Kafka's
   * `ssl.allow.dn.changes` / `ssl.allow.san.changes` (both false by default) do not allow.
   */
  check(get: StoreLookup): void {
    this.ensureCompatible(TlsServerContext.secureOptions(this.listener, get, this.clientAuth), get);
  }

  /** Kafka's SslFactory.CertificateEntries.ensureCompatible. */
  private ensureCompatible(next: SecureContextOptions, get: StoreLookup): void {
    const allowDn = (get('ssl.allow.dn.changes') ?? 'false').toLowerCase() === 'true';
    const allowSan = (get('ssl.allow.san.changes') ?? 'false').toLowerCase() === 'true';
    if (allowDn && allowSan) return;
    const before = leafCertificate(this.current);
    const after = leafCertificate(next);
    if (before === null || after === null) return;
    if (!allowDn && before.subject !== after.subject) {
      throw invalid(`listener ${this.listener}: Keystore DistinguishedName does not match: existing=${rfc2253(before.subject)}, new=${rfc2253(after.subject)} (set ssl.allow.dn.changes=true to allow it)`);
    }
    if (!allowSan && (before.subjectAltName ?? '') !== (after.subjectAltName ?? '')) {
      throw invalid(`listener ${this.listener}: Keystore SubjectAltNames do not match: existing=${before.subjectAltName ?? ''}, new=${after.subjectAltName ?? ''} (set ssl.allow.san.changes=true to allow it)`);
    }
  }

  /**
   * Serves new connections with the stores `get` names (an AlterConfigs of the listener's SSL
   * keys); throws INVALID_CONFIG and keeps the current ones when they do not load.
   */
  reconfigure(get: StoreLookup): void {
    const options = TlsServerContext.secureOptions(this.listener, get, this.clientAuth);
    this.ensureCompatible(options, get);
    this.current = options;
    this.get = get;
    this.apply?.(this.serverOptions(this.handshakeTimeoutMs));
    if (this.watching) {
      this.close();
      this.watchFiles();
    }
    this.log.info('reconfigured TLS key and trust stores', { listener: this.listener });
  }

  /** Calls `apply` with fresh options whenever a store file changes and still loads. */
  watch(apply: (options: TlsOptions) => void, handshakeTimeoutMs: number): void {
    if (this.watching) return;
    this.apply = apply;
    this.handshakeTimeoutMs = handshakeTimeoutMs;
    this.watchFiles();
  }

  private watchFiles(): void {
    const apply = this.apply!;
    const handshakeTimeoutMs = this.handshakeTimeoutMs;
    this.watching = true;
    this.files = storeFiles(this.get);
    for (const f of this.files) {
      this.mtimes.set(f, mtimeOf(f));
      watchFile(f, { interval: STORE_POLL_MS, persistent: false }, () => {
        const m = mtimeOf(f);
        if (m === this.mtimes.get(f)) return;
        this.mtimes.set(f, m);
        try {
          this.current = TlsServerContext.secureOptions(this.listener, this.get, this.clientAuth);
          apply(this.serverOptions(handshakeTimeoutMs));
          this.log.info('reloaded TLS key and trust stores', { listener: this.listener, file: f });
        } catch (err) {
          // A store being rewritten may be read half-written; the old context stays until it loads.
          this.log.warn('TLS store changed but does not load, keeping the previous one', { listener: this.listener, file: f, err: (err as Error).message });
        }
      });
    }
  }

  close(): void {
    for (const f of this.files) unwatchFile(f);
    this.watching = false;
  }
}

/**
 * The certificate a context serves, read by OpenSSL itself (an unconnected server-side TLSSocket
 * over the context), whatever store format it came from; null when there is none.
 */
function leafCertificate(options: SecureContextOptions): X509Certificate | null {
  const raw = new Socket();
  const socket = new TLSSocket(raw, { isServer: true, secureContext: createSecureContext(options) });
  try {
    const cert = socket.getCertificate();
    return cert && 'raw' in cert && cert.raw ? new X509Certificate(cert.raw) : null;
  } finally {
    socket.destroy();
    raw.destroy();
  }
}

function mtimeOf(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}
