/**
 * Sealing a VirtualCluster's kubeconfig for the hub (decision D34). The cell agent on a managed
 * cluster seals with the hub's public key and signs with its own key; only the hub's private key
 * opens it, and only a seal signed by the agent of the VirtualCluster's own ManagedCluster is
 * accepted. Anyone who may read ManifestWorks in the cluster's hub namespace sees the feedback,
 * so only ciphertext travels. Keys: sealing-keys.ts. Node's built-in crypto only.
 *
 * Envelope version 2, JSON base64-encoded into one string:
 * `{"v":2,"alg":"RSA-OAEP-256+A256GCM","kid","cluster","signer","key","iv","tag","data","sig"}`.
 * A fresh AES-256-GCM key encrypts the plaintext; RSA-OAEP with SHA-256 wraps that key for the
 * hub key `kid` (its key id), so a hub holding a current and a previous key knows which opens it.
 * `cluster` is the ManagedCluster the agent runs on, `signer` its signing key's id, and `sig` its
 * Ed25519 signature over the VirtualCluster's UID and every other field (signedBytes); the same
 * UID, cluster and kid are the cipher's additional authenticated data. A seal therefore cannot be
 * replayed for another VirtualCluster, nor passed off as another cluster's.
 *
 * Version 1 (`{"v":1,"alg","key","iv","tag","data"}`, the UID as additional data, no key id, no
 * signature) is what agents before version 2 sealed. It is opened only while the VirtualCluster's
 * ManagedCluster has no agent signing key on record (such an agent never published one), with
 * whichever hub key opens it; once the agent's key is known, only a signed version 2 is accepted.
 */
import {
  constants,
  createCipheriv,
  createDecipheriv,
  createPublicKey,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { isJsonObject } from '../json/json.js';
import { keyId, SealingError, type SealingKeys } from './sealing-keys.js';

export { SealingError } from './sealing-keys.js';

export const SEALING_VERSION = 2;
export const SEALING_ALGORITHM = 'RSA-OAEP-256+A256GCM';
const CONTEXT = 'kubecell.io/sealed-kubeconfig/v2';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** Who seals: the ManagedCluster the agent runs on, and the agent's Ed25519 signing key. */
export interface SealOrigin {
  managedCluster: string;
  signingKey: KeyObject;
}

/** What the hub expects of a seal: its VirtualCluster, that one's ManagedCluster and its agent. */
export interface ExpectedSeal {
  uid: string;
  managedCluster: string;
  /** The public signing key that ManagedCluster's agent published; undefined: none on record. */
  agentKey: KeyObject | undefined;
}

export interface Unsealed {
  plaintext: string;
  version: 1 | 2;
  /** Which of the hub's keys opened it. */
  hubKey: 'current' | 'previous';
}

interface Envelope {
  v: number;
  alg: string;
  key: string;
  iv: string;
  tag: string;
  data: string;
  kid?: string;
  cluster?: string;
  signer?: string;
  sig?: string;
}

const V1_FIELDS = ['key', 'iv', 'tag', 'data'] as const;
const V2_FIELDS = [...V1_FIELDS, 'kid', 'cluster', 'signer', 'sig'] as const;

const oaep = (key: KeyObject) => ({
  key,
  padding: constants.RSA_PKCS1_OAEP_PADDING,
  oaepHash: 'sha256',
});

const aad = (uid: string, cluster: string, kid: string): Buffer =>
  Buffer.from([CONTEXT, uid, cluster, kid].join('\0'), 'utf8');

/** What the agent signs: the UID and every field of the envelope but the signature. */
function signedBytes(uid: string, envelope: Envelope): Buffer {
  const { alg, kid, cluster, signer, key, iv, tag, data } = envelope;
  return Buffer.from([CONTEXT, uid, alg, kid, cluster, signer, key, iv, tag, data].join('\0'));
}

function hubPublicKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new SealingError('cannot seal: the public sealing key is not a PEM public key');
  }
  if (key.asymmetricKeyType !== 'rsa')
    throw new SealingError('cannot seal: the public sealing key is not an RSA key');
  return key;
}

/** Seals `plaintext` for the holder of `publicKeyPem`'s private key, bound to `uid`, signed by `origin`. */
export function sealFor(
  publicKeyPem: string,
  virtualClusterUid: string,
  plaintext: string,
  origin: SealOrigin,
): string {
  if (virtualClusterUid === '')
    throw new SealingError('cannot seal: the VirtualCluster UID is empty');
  if (origin.managedCluster === '')
    throw new SealingError('cannot seal: the ManagedCluster name is empty');
  const publicKey = hubPublicKey(publicKeyPem);
  const kid = keyId(publicKey);
  const contentKey = randomBytes(KEY_BYTES);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', contentKey, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad(virtualClusterUid, origin.managedCluster, kid));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const envelope: Envelope = {
    v: SEALING_VERSION,
    alg: SEALING_ALGORITHM,
    kid,
    cluster: origin.managedCluster,
    signer: keyId(origin.signingKey),
    key: publicEncrypt(oaep(publicKey), contentKey).toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
  envelope.sig = sign(null, signedBytes(virtualClusterUid, envelope), origin.signingKey).toString(
    'base64',
  );
  return Buffer.from(JSON.stringify(envelope), 'utf8').toString('base64');
}

/**
 * Opens what `sealFor` sealed, if it was sealed for `expected`. Throws a SealingError that says
 * which check failed (not an envelope, another version, another cluster, an unknown or wrong
 * signer, a bad signature, a hub key it was not sealed for, a changed ciphertext) and never
 * echoes the value or a key, only key ids.
 */
export function unseal(keys: SealingKeys, expected: ExpectedSeal, sealed: string): Unsealed {
  const envelope = parseEnvelope(sealed);
  if (envelope.v === 1) return openVersion1(keys, expected, envelope);
  checkOrigin(envelope, expected);
  const kid = envelope.kid ?? '';
  const hubKey = keyId(keys.current) === kid ? 'current' : 'previous';
  const key = hubKey === 'current' ? keys.current : keys.previous;
  if (key === undefined || keyId(key) !== kid) {
    const previous = keys.previous === undefined ? 'none' : keyId(keys.previous);
    throw new SealingError(
      `cannot unseal: sealed for hub key ${kid}, which is neither the current sealing key ${keyId(keys.current)} nor the previous one (${previous})`,
    );
  }
  const additional = aad(expected.uid, expected.managedCluster, kid);
  return { plaintext: decrypt(key, envelope, additional), version: 2, hubKey };
}

/** The seal names this VirtualCluster's ManagedCluster and is signed by that cluster's agent. */
function checkOrigin(envelope: Envelope, expected: ExpectedSeal): void {
  const cluster = expected.managedCluster;
  if (envelope.cluster !== cluster) {
    throw new SealingError(
      `cannot unseal: sealed by the cell agent of ManagedCluster ${JSON.stringify(envelope.cluster)}, not of ${JSON.stringify(cluster)} where this VirtualCluster is`,
    );
  }
  if (expected.agentKey === undefined) {
    throw new SealingError(
      `cannot unseal: the cell agent of ManagedCluster ${JSON.stringify(cluster)} has not published its signing key, so its signature cannot be checked yet`,
    );
  }
  const agent = keyId(expected.agentKey);
  if (envelope.signer !== agent) {
    throw new SealingError(
      `cannot unseal: signed with key ${envelope.signer ?? ''}, not with ${agent}, the key the cell agent of ManagedCluster ${JSON.stringify(cluster)} published`,
    );
  }
  if (!signatureHolds(envelope, expected.uid, expected.agentKey)) {
    throw new SealingError(
      `cannot unseal: the cell agent's signature does not verify (sealed for another VirtualCluster than UID ${JSON.stringify(expected.uid)}, or changed after sealing)`,
    );
  }
}

function signatureHolds(envelope: Envelope, uid: string, agentKey: KeyObject): boolean {
  try {
    const signature = Buffer.from(envelope.sig ?? '', 'base64');
    return verify(null, signedBytes(uid, envelope), agentKey, signature);
  } catch {
    return false;
  }
}

function openVersion1(keys: SealingKeys, expected: ExpectedSeal, envelope: Envelope): Unsealed {
  if (expected.agentKey !== undefined) {
    throw new SealingError(
      `cannot unseal: envelope version 1 carries no signature, and the cell agent of ManagedCluster ${JSON.stringify(expected.managedCluster)} signs what it seals (version ${SEALING_VERSION})`,
    );
  }
  const additional = Buffer.from(expected.uid, 'utf8');
  const candidates = [['current', keys.current] as const, ['previous', keys.previous] as const];
  for (const [hubKey, key] of candidates) {
    if (key === undefined || unwrap(key, envelope) === undefined) continue;
    return { plaintext: decrypt(key, envelope, additional), version: 1, hubKey };
  }
  throw new SealingError(
    'cannot unseal: no hub sealing key opens it (sealed for another sealing key)',
  );
}

function unwrap(key: KeyObject, envelope: Envelope): Buffer | undefined {
  try {
    return privateDecrypt(oaep(key), Buffer.from(envelope.key, 'base64'));
  } catch {
    return undefined;
  }
}

function decrypt(key: KeyObject, envelope: Envelope, additional: Buffer): string {
  const contentKey = unwrap(key, envelope);
  if (contentKey === undefined) {
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
    decipher.setAAD(additional);
    decipher.setAuthTag(tag);
    const data = Buffer.from(envelope.data, 'base64');
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch {
    throw new SealingError(
      'cannot unseal: authentication failed (sealed for another VirtualCluster, or changed after sealing)',
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
  const version = value['v'];
  if ((version !== 1 && version !== SEALING_VERSION) || value['alg'] !== SEALING_ALGORITHM) {
    throw new SealingError(
      `cannot unseal: envelope version ${JSON.stringify(version)} (${JSON.stringify(value['alg'])}) is not 1 or ${SEALING_VERSION} (${SEALING_ALGORITHM})`,
    );
  }
  const fields = version === 1 ? V1_FIELDS : V2_FIELDS;
  const missing = fields.filter((field) => typeof value[field] !== 'string');
  if (missing.length > 0)
    throw new SealingError(`cannot unseal: the envelope lacks ${missing.join(', ')}`);
  return value as unknown as Envelope;
}
