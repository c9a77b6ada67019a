/**
 * The keys of sealing (decision D34): the hub's RSA keys that open sealed kubeconfigs, and each
 * cell agent's Ed25519 key that signs what it seals (sealing.ts).
 *
 * - The hub's **current** key (KUBECELL_SEALING_KEY_FILE): its public half goes to every agent,
 *   which seals with it. A **previous** key (KUBECELL_SEALING_PREVIOUS_KEY_FILE, set only during
 *   a rotation) still opens what an agent sealed before it got the current public key, so a
 *   rotation has no window in which a sealed kubeconfig cannot be opened.
 * - A key id is `sha256:` and the hex SHA-256 of the public key's DER SubjectPublicKeyInfo: what
 *   an envelope names its hub key and its signer by, never the key itself.
 * - An agent's signing key is made on its cluster and never leaves it; its public half travels
 *   as base64 of the DER SubjectPublicKeyInfo (agentPublicKeyText), which the hub parses anew
 *   (parseAgentPublicKey).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EnvReader } from '../config/env-reader.js';

/** The hook server's settings: the files (a mounted Secret) of the hub's private keys (PEM). */
export const SEALING_KEY_FILE_ENV = 'KUBECELL_SEALING_KEY_FILE';
export const SEALING_PREVIOUS_KEY_FILE_ENV = 'KUBECELL_SEALING_PREVIOUS_KEY_FILE';

/** Sealing or unsealing failed; the message never carries key or secret material. */
export class SealingError extends Error {
  override name = 'SealingError';
}

/** The hub's private keys: the one agents seal with, and the one a rotation replaces. */
export interface SealingKeys {
  current: KeyObject;
  previous?: KeyObject;
}

/** `sha256:<hex>` of the public key's DER SubjectPublicKeyInfo (of a private key's public half). */
export function keyId(key: KeyObject): string {
  const spki = publicOf(key).export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

const publicOf = (key: KeyObject): KeyObject =>
  key.type === 'public' ? key : createPublicKey(key);

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

function readKey(
  reader: EnvReader,
  variable: string,
  path: string | undefined,
  read: (path: string) => string,
): KeyObject | undefined {
  if (path === undefined) return undefined;
  try {
    return loadPrivateKey(read(path));
  } catch (error) {
    const why = error instanceof SealingError ? error.message : 'the file cannot be read';
    reader.problem(
      `${variable}=${JSON.stringify(path)}: ${why}; mount the Secret kubecell-sealing-key (an RSA private key in PEM) and name its file here`,
    );
    return undefined;
  }
}

/**
 * The hub's sealing keys from the files KUBECELL_SEALING_KEY_FILE and (optional)
 * KUBECELL_SEALING_PREVIOUS_KEY_FILE name; undefined when the first is unset (no ManifestWork
 * Cell can then publish a kubeconfig). Throws a ConfigError naming the variable when a file
 * cannot be read or holds no usable key, or when a previous key is set without a current one.
 */
export function loadSealingKeysFromEnv(
  env: NodeJS.ProcessEnv,
  read: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): SealingKeys | undefined {
  const reader = new EnvReader(env);
  // Named literally, so that the README's settings table test finds both variables.
  const currentPath = reader.optional('KUBECELL_SEALING_KEY_FILE');
  const previousPath = reader.optional('KUBECELL_SEALING_PREVIOUS_KEY_FILE');
  const current = readKey(reader, SEALING_KEY_FILE_ENV, currentPath, read);
  const previous = readKey(reader, SEALING_PREVIOUS_KEY_FILE_ENV, previousPath, read);
  if (previous !== undefined && currentPath === undefined) {
    reader.problem(
      `${SEALING_PREVIOUS_KEY_FILE_ENV} is set but ${SEALING_KEY_FILE_ENV} is not: a rotation needs the new key as ${SEALING_KEY_FILE_ENV} and the old one as ${SEALING_PREVIOUS_KEY_FILE_ENV}`,
    );
  }
  reader.finish();
  if (current === undefined) return undefined;
  return previous === undefined || keyId(previous) === keyId(current)
    ? { current }
    : { current, previous };
}

/** A new signing key for a cell agent (Ed25519). */
export function generateAgentKey(): KeyObject {
  return generateKeyPairSync('ed25519').privateKey;
}

/** An agent's signing key from PEM (PKCS#8), or undefined when it is not an Ed25519 private key. */
export function parseAgentPrivateKey(pem: string): KeyObject | undefined {
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}

export function agentPrivateKeyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** How an agent's public key travels: base64 of its DER SubjectPublicKeyInfo (60 characters). */
export function agentPublicKeyText(key: KeyObject): string {
  return publicOf(key).export({ type: 'spki', format: 'der' }).toString('base64');
}

/** Most characters of an agent public key text: an Ed25519 one takes 60. */
const MAX_AGENT_KEY_CHARS = 128;

/**
 * An agent's public key from its text (feedback, an annotation: bytes from outside the hook
 * server's trust), or undefined when it is not an Ed25519 public key in that form.
 */
export function parseAgentPublicKey(text: unknown): KeyObject | undefined {
  if (typeof text !== 'string' || text.length > MAX_AGENT_KEY_CHARS) return undefined;
  if (!/^[A-Za-z0-9+/]+=*$/.test(text)) return undefined;
  try {
    const key = createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}
