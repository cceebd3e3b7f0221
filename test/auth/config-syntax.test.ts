/**
 * The operator-written syntaxes the node reads as Kafka does: `ssl.principal.mapping.rules`
 * (SslPrincipalMapper), JAAS config values (JaasConfig), and Java cipher suite names.
 */
import { describe, expect, it } from 'vitest';
import { SslPrincipalMapper, rfc2253 } from '../../src/auth/ssl-principal-mapper.js';
import { parseJaasConfig } from '../../src/auth/jaas.js';
import { opensslCipherName } from '../../src/server/tls-context.js';

describe('ssl.principal.mapping.rules', () => {
  it('applies the first rule that matches the whole subject, with case changes, else DEFAULT', () => {
    const m = SslPrincipalMapper.parse('RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,DEFAULT');
    expect(m.name('CN=kafka-server,OU=ServiceUsers,O=Org')).toBe('kafka-server');
    expect(m.name('CN=Duke,OU=JavaSoft,O=Sun')).toBe('duke@javasoft');
    expect(m.name('OU=x,cn=admin')).toBe('ADMIN');
    expect(m.name('O=NoName')).toBe('O=NoName');
  });

  it('DEFAULT alone keeps the subject; a malformed rule is refused', () => {
    expect(SslPrincipalMapper.parse(undefined).name('CN=a,O=b')).toBe('CN=a,O=b');
    expect(() => SslPrincipalMapper.parse('RULE:^CN=(.*)$/$1')).toThrow('Invalid rule');
  });

  it('writes a subject in RFC 2253 order, most specific first, with special characters escaped', () => {
    expect(rfc2253('C=NO\nO=Fjord, Inc\nCN=alice')).toBe('CN=alice,O=Fjord\\, Inc,C=NO');
  });
});

describe('JAAS config', () => {
  it('reads a PlainLoginModule with quoted users and passwords', () => {
    const [m] = parseJaasConfig('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="a \\"b\\"" user_alice="alice-secret";', 'k');
    expect(m!.loginModule).toBe('org.apache.kafka.common.security.plain.PlainLoginModule');
    expect(m!.flag).toBe('required');
    expect([...m!.options]).toEqual([['username', 'admin'], ['password', 'a "b"'], ['user_alice', 'alice-secret']]);
  });

  it('refuses a login module without a flag or without its closing semicolon', () => {
    expect(() => parseJaasConfig('org.example.Module user_a="b";', 'k')).toThrow('invalid JAAS configuration');
    expect(() => parseJaasConfig('org.example.Module required user_a="b"', 'k')).toThrow("missing ';'");
  });
});

describe('ssl.cipher.suites', () => {
  it('takes Java names in OpenSSL spelling, and OpenSSL or TLS 1.3 names as they are', () => {
    expect(opensslCipherName('TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384')).toBe('ECDHE-RSA-AES256-GCM-SHA384');
    expect(opensslCipherName('TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256')).toBe('ECDHE-ECDSA-CHACHA20-POLY1305');
    expect(opensslCipherName('TLS_RSA_WITH_AES_128_GCM_SHA256')).toBe('AES128-GCM-SHA256');
    expect(opensslCipherName('TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256')).toBe('ECDHE-RSA-AES128-SHA256');
    expect(opensslCipherName('TLS_AES_128_GCM_SHA256')).toBe('TLS_AES_128_GCM_SHA256');
    expect(opensslCipherName('ECDHE-RSA-AES128-GCM-SHA256')).toBe('ECDHE-RSA-AES128-GCM-SHA256');
  });
});
