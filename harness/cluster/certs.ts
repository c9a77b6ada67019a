// Certificates and keys for the local control plane, made with the openssl CLI (Node's crypto
// can create keys but not X.509 certificates). ECDSA P-256 keys keep generation fast.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCommandOrThrow } from './processes.js';

export interface KeyAndCertificate {
  certFile: string;
  keyFile: string;
}

export interface ServiceAccountKeys {
  /** Signs service-account tokens (apiserver) and is used by the token controller. */
  privateKeyFile: string;
  /** Verifies service-account tokens. */
  publicKeyFile: string;
}

export interface CertificateRequest {
  /** Base name of the files written (`<name>.crt`, `<name>.key`). */
  name: string;
  /** Kubernetes user name when used as a client certificate. */
  commonName: string;
  /** Kubernetes groups when used as a client certificate (e.g. system:masters). */
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  usage: 'server' | 'client';
}

const VALIDITY_DAYS = '365';

async function openssl(args: readonly string[], cwd: string): Promise<void> {
  try {
    await runCommandOrThrow('openssl', args, { cwd });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'the cluster tests need the `openssl` command (OpenSSL 3) on PATH to create certificates',
        { cause: error },
      );
    }
    throw error;
  }
}

/** `/O=a/O=b/CN=c`, the subject syntax of `openssl req -subj`. */
function subject(commonName: string, organizations: readonly string[] = []): string {
  for (const value of [commonName, ...organizations]) {
    if (/[/\\=]/.test(value))
      throw new Error(`unsupported character in certificate subject value: ${value}`);
  }
  return [...organizations.map((organization) => `/O=${organization}`), `/CN=${commonName}`].join(
    '',
  );
}

const ecKeyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** A self-signed CA written to `<name>.crt` and `<name>.key`. */
export async function createCertificateAuthority(
  dir: string,
  name: string,
  commonName: string,
): Promise<KeyAndCertificate> {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  await openssl(
    [
      'req',
      '-x509',
      ...ecKeyArgs,
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      VALIDITY_DAYS,
      '-subj',
      subject(commonName),
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ],
    dir,
  );
  return { certFile, keyFile };
}

export async function issueCertificate(
  ca: KeyAndCertificate,
  dir: string,
  request: CertificateRequest,
): Promise<KeyAndCertificate> {
  const certFile = path.join(dir, `${request.name}.crt`);
  const keyFile = path.join(dir, `${request.name}.key`);
  const csrFile = path.join(dir, `${request.name}.csr`);
  const extensionsFile = path.join(dir, `${request.name}.ext`);
  const subjectAltNames = [
    ...(request.dnsNames ?? []).map((name) => `DNS:${name}`),
    ...(request.ipAddresses ?? []).map((ip) => `IP:${ip}`),
  ];
  writeFileSync(
    extensionsFile,
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      `extendedKeyUsage=${request.usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
      ...(subjectAltNames.length > 0 ? [`subjectAltName=${subjectAltNames.join(',')}`] : []),
      '',
    ].join('\n'),
  );
  await openssl(
    [
      'req',
      '-new',
      ...ecKeyArgs,
      '-keyout',
      keyFile,
      '-out',
      csrFile,
      '-subj',
      subject(request.commonName, request.organizations),
    ],
    dir,
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      csrFile,
      '-CA',
      ca.certFile,
      '-CAkey',
      ca.keyFile,
      // A random serial: certificates of different runs must never look like the same one.
      '-set_serial',
      `0x${randomBytes(16).toString('hex')}`,
      '-days',
      VALIDITY_DAYS,
      '-extfile',
      extensionsFile,
      '-out',
      certFile,
    ],
    dir,
  );
  return { certFile, keyFile };
}

export async function createServiceAccountKeys(dir: string): Promise<ServiceAccountKeys> {
  const privateKeyFile = path.join(dir, 'service-account.key');
  const publicKeyFile = path.join(dir, 'service-account.pub');
  await openssl(
    ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', privateKeyFile],
    dir,
  );
  await openssl(['pkey', '-in', privateKeyFile, '-pubout', '-out', publicKeyFile], dir);
  return { privateKeyFile, publicKeyFile };
}

/** A fresh RSA-3072 private key (PKCS #8 PEM, mode 0600): the hub's sealing key for the hook server. */
export function writeSealingKey(file: string): void {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
}
