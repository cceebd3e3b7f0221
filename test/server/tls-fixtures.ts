/**
 * Certificates made at test time with openssl and keytool, the way an operator makes them: a CA,
 * a server certificate for 127.0.0.1/localhost, a client certificate signed by the CA, and a
 * client certificate from another CA that the node does not trust. Each comes as PEM, PKCS12 and
 * JKS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const STORE_PASSWORD = 'fjord-test-pass';

export interface Identity {
  readonly keyPem: string;
  readonly certPem: string;
  readonly keyFile: string;
  readonly certFile: string;
  /** key + certificate chain in one PEM file. */
  readonly pemFile: string;
  readonly p12: string;
  readonly jks: string;
}

export interface TestPki {
  readonly dir: string;
  readonly caPem: string;
  readonly caFile: string;
  readonly truststoreJks: string;
  readonly truststoreP12: string;
  readonly server: Identity;
  readonly client: Identity;
  readonly untrustedClient: Identity;
  /** A new server identity (another subject) for reload tests. */
  issueServer(name: string, cn: string): Identity;
  cleanup(): void;
}

function run(cmd: string, args: string[], cwd: string): void {
  execFileSync(cmd, args, { cwd, stdio: 'pipe' });
}

function issue(dir: string, name: string, subject: string, caKey: string, caCert: string, san: string | null): Identity {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  run('openssl', ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subject], dir);
  writeFileSync(ext, san ? `subjectAltName=${san}\n` : 'basicConstraints=CA:FALSE\n');
  run('openssl', ['x509', '-req', '-in', csr, '-CA', caCert, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '2', '-sha256', '-extfile', ext], dir);
  const pemFile = join(dir, `${name}.pem`);
  const keyPem = readFileSync(key, 'utf8');
  const certPem = readFileSync(cert, 'utf8');
  writeFileSync(pemFile, keyPem + certPem + readFileSync(caCert, 'utf8'));
  const p12 = join(dir, `${name}.p12`);
  run('openssl', ['pkcs12', '-export', '-in', cert, '-inkey', key, '-certfile', caCert, '-name', name, '-out', p12, '-passout', `pass:${STORE_PASSWORD}`], dir);
  const jks = join(dir, `${name}.jks`);
  run('keytool', ['-importkeystore', '-noprompt', '-srckeystore', p12, '-srcstoretype', 'PKCS12', '-srcstorepass', STORE_PASSWORD,
    '-destkeystore', jks, '-deststoretype', 'JKS', '-deststorepass', STORE_PASSWORD, '-destkeypass', STORE_PASSWORD], dir);
  return { keyPem, certPem, keyFile: key, certFile: cert, pemFile, p12, jks };
}

function makeCa(dir: string, name: string): { key: string; cert: string } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.crt`);
  run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`], dir);
  return { key, cert };
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-pki-'));
  const ca = makeCa(dir, 'fjord-test-ca');
  const other = makeCa(dir, 'other-ca');
  const server = issue(dir, 'server', '/O=Fjord/OU=Brokers/CN=broker1', ca.key, ca.cert, 'IP:127.0.0.1,DNS:localhost');
  const client = issue(dir, 'client', '/O=Fjord/OU=Clients/CN=alice', ca.key, ca.cert, null);
  const untrustedClient = issue(dir, 'mallory', '/O=Elsewhere/CN=mallory', other.key, other.cert, null);
  const truststoreJks = join(dir, 'truststore.jks');
  run('keytool', ['-importcert', '-noprompt', '-alias', 'ca', '-file', ca.cert, '-keystore', truststoreJks, '-storetype', 'JKS', '-storepass', STORE_PASSWORD], dir);
  const truststoreP12 = join(dir, 'truststore.p12');
  run('keytool', ['-importcert', '-noprompt', '-alias', 'ca', '-file', ca.cert, '-keystore', truststoreP12, '-storetype', 'PKCS12', '-storepass', STORE_PASSWORD], dir);
  return {
    dir,
    caPem: readFileSync(ca.cert, 'utf8'),
    caFile: ca.cert,
    truststoreJks,
    truststoreP12,
    server,
    client,
    untrustedClient,
    issueServer: (name, cn) => issue(dir, name, `/O=Fjord/CN=${cn}`, ca.key, ca.cert, 'IP:127.0.0.1,DNS:localhost'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
