/**
 * Certificates made with openssl in the test: a self-signed one, and a CA with a leaf it signed,
 * both for localhost and 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface KeyPair {
  readonly key: string;
  readonly cert: string;
}

export interface TestCertificates {
  readonly selfSigned: KeyPair;
  /** Signed by `caCert`. */
  readonly caSigned: KeyPair;
  readonly caCert: string;
  /** A file holding caCert, for WEBHOOK_CA_FILE or NODE_EXTRA_CA_CERTS. */
  readonly caFile: string;
  cleanup(): void;
}

const SAN = 'subjectAltName=DNS:localhost,IP:127.0.0.1';

export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-certs-'));
  const at = (f: string) => path.join(dir, f);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'self.key',
    '-out',
    'self.crt',
    '-days',
    '2',
    '-subj',
    '/CN=localhost',
    '-addext',
    SAN,
  );
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=eventrelay test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
  writeFileSync(at('leaf.ext'), `${SAN}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'leaf.crt',
    '-days',
    '2',
    '-extfile',
    'leaf.ext',
  );
  const read = (f: string) => readFileSync(at(f), 'utf8');
  return {
    selfSigned: { key: read('self.key'), cert: read('self.crt') },
    caSigned: { key: read('leaf.key'), cert: read('leaf.crt') },
    caCert: read('ca.crt'),
    caFile: at('ca.crt'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
