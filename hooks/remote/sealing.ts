/**
 * Sealing a VirtualCluster's kubeconfig for the hub (decision D34). The cell agent on a managed
 * cluster seals with the hub's public key; only the hub's private key opens it. Anyone who may
 * read ManifestWorks in the cluster's hub namespace sees the feedback, so only ciphertext travels.
 *
 * Envelope (version 1): a fresh AES-256-GCM key encrypts the plaintext, with the VirtualCluster's
 * UID as additional authenticated data, so a sealed value cannot be replayed for another
 * VirtualCluster; RSA-OAEP with SHA-256 wraps that key. The envelope is JSON
 * `{"v":1,"alg":"RSA-OAEP-256+A256GCM","key","iv","tag","data"}` (binary parts base64), itself
 * base64-encoded into one string. Node's built-in crypto only.
 */
import {
  constants,
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EnvReader } from '../config/env-reader.js';
import { isJsonObject } from '../json/json.js';

export const SEALING_VERSION = 1;
export const SEALING_ALGORITHM = 'RSA-OAEP-256+A256GCM';
/** The hook server's setting: the file (a mounted Secret) holding the hub's private key (PEM). */
export const SEALING_KEY_FILE_ENV = 'KUBECELL_SEALING_KEY_FILE';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** Sealing or unsealing failed; the message never carries key or secret material. */
export class SealingError extends Error {
  override name = 'SealingError';
}

interface Envelope {
  v: number;
  alg: string;
  key: string;
  iv: string;
  tag: string;
  data: string;
}

const oaep = (key: KeyObject) => ({
  key,
  padding: constants.RSA_PKCS1_OAEP_PADDING,
  oaepHash: 'sha256',
});

/** Seals `plaintext` for the holder of the private key of `publicKeyPem`, bound to `uid`. */
export function sealFor(
  publicKeyPem: string,
  virtualClusterUid: string,
  plaintext: string,
): string {
  if (virtualClusterUid === '')
    throw new SealingError('cannot seal: the VirtualCluster UID is empty');
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey(publicKeyPem);
  } catch {
    throw new SealingError('cannot seal: the public sealing key is not a PEM public key');
  }
  if (publicKey.asymmetricKeyType !== 'rsa')
    throw new SealingError('cannot seal: the public sealing key is not an RSA key');
  const contentKey = randomBytes(KEY_BYTES);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', contentKey, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(virtualClusterUid, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const envelope: Envelope = {
    v: SEALING_VERSION,
    alg: SEALING_ALGORITHM,
    key: publicEncrypt(oaep(publicKey), contentKey).toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
  return Buffer.from(JSON.stringify(envelope), 'utf8').toString('base64');
}

/**
 * Opens what `sealFor` sealed for `virtualClusterUid`. Throws a SealingError that says which
 * step failed (not an envelope, another version, a key that does not open it, another UID or a
 * changed ciphertext) and never echoes the value or a key.
 */
export function unseal(
  privateKey: KeyObject | string,
  virtualClusterUid: string,
  sealed: string,
): string {
  const envelope = parseEnvelope(sealed);
  const key = typeof privateKey === 'string' ? loadPrivateKey(privateKey) : privateKey;
  let contentKey: Buffer;
  try {
    contentKey = privateDecrypt(oaep(key), Buffer.from(envelope.key, 'base64'));
  } catch {
    throw new SealingError(
      'cannot unseal: the hub private key does not open it (sealed for another sealing key)',
    );
  }
  const iv = Buffer.from(envelope.iv, 'base64');
  const tag = Buffer.from(envelope.tag, 'base64');
  if (contentKey.length !== KEY_BYTES || iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
    throw new SealingError('cannot unseal: the envelope has a key, iv or tag of the wrong size');
  try {
    const decipher = createDecipheriv('aes-256-gcm', contentKey, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(virtualClusterUid, 'utf8'));
    decipher.setAuthTag(tag);
    const data = Buffer.from(envelope.data, 'base64');
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch {
    throw new SealingError(
      `cannot unseal: authentication failed (sealed for another VirtualCluster than UID ${JSON.stringify(virtualClusterUid)}, or changed after sealing)`,
    );
  }
}

function parseEnvelope(sealed: string): Envelope {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(sealed.trim(), 'base64').toString('utf8'));
  } catch {
    throw new SealingError('cannot unseal: not a sealed value (base64 of a JSON envelope)');
  }
  if (!isJsonObject(value)) throw new SealingError('cannot unseal: the envelope is not an object');
  if (value['v'] !== SEALING_VERSION || value['alg'] !== SEALING_ALGORITHM) {
    throw new SealingError(
      `cannot unseal: envelope version ${JSON.stringify(value['v'])} (${JSON.stringify(value['alg'])}) is not ${SEALING_VERSION} (${SEALING_ALGORITHM})`,
    );
  }
  const missing = ['key', 'iv', 'tag', 'data'].filter((field) => typeof value[field] !== 'string');
  if (missing.length > 0)
    throw new SealingError(`cannot unseal: the envelope lacks ${missing.join(', ')}`);
  return value as unknown as Envelope;
}

/** A private key from PEM (PKCS#8 or PKCS#1); an RSA key of at least 2048 bits. */
export function loadPrivateKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new SealingError('the sealing key is not a PEM private key');
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa' || bits < 2048)
    throw new SealingError('the sealing key must be an RSA private key of at least 2048 bits');
  return key;
}

/** The public key (SPKI PEM) the agents seal with, derived from the hub's private key. */
export function publicKeyPemOf(privateKey: KeyObject | string): string {
  const key = typeof privateKey === 'string' ? loadPrivateKey(privateKey) : privateKey;
  return createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
}

/**
 * The hub's private sealing key from the file KUBECELL_SEALING_KEY_FILE names; undefined when the
 * variable is unset (no ManifestWork Cell can then publish a kubeconfig). Throws a ConfigError
 * naming the variable when the file cannot be read or holds no usable key.
 */
export function loadSealingKeyFromEnv(
  env: NodeJS.ProcessEnv,
  read: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): KeyObject | undefined {
  const reader = new EnvReader(env);
  const path = reader.optional('KUBECELL_SEALING_KEY_FILE');
  let key: KeyObject | undefined;
  if (path !== undefined) {
    try {
      key = loadPrivateKey(read(path));
    } catch (error) {
      const why = error instanceof SealingError ? error.message : 'the file cannot be read';
      reader.problem(
        `${SEALING_KEY_FILE_ENV}=${JSON.stringify(path)}: ${why}; mount the Secret kubecell-sealing-key (an RSA private key in PEM) and name its file here`,
      );
    }
  }
  reader.finish();
  return key;
}
