import { expect } from 'chai';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { ConfigError } from '../config/env-reader.js';
import {
  agentPrivateKeyPem,
  agentPublicKeyText,
  generateAgentKey,
  keyId,
  loadSealingKeysFromEnv,
  parseAgentPrivateKey,
  parseAgentPublicKey,
  publicKeyPemOf,
} from './sealing-keys.js';

const pem = (key: { export: (options: { type: 'pkcs8'; format: 'pem' }) => string | Buffer }) =>
  key.export({ type: 'pkcs8', format: 'pem' }).toString();
const hub = generateKeyPairSync('rsa', { modulusLength: 2048 });
const old = generateKeyPairSync('rsa', { modulusLength: 2048 });
const files: Record<string, string> = {
  '/keys/sealing-key.pem': pem(hub.privateKey),
  '/keys/previous-sealing-key.pem': pem(old.privateKey),
  '/keys/bad': 'nope',
};
const read = (path: string): string => {
  const text = files[path];
  if (text === undefined) throw new Error(`ENOENT: ${path}`);
  return text;
};
function problems(env: NodeJS.ProcessEnv): string {
  try {
    loadSealingKeysFromEnv(env, read);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return (error as ConfigError).problems.join('\n');
  }
  throw new Error('expected a ConfigError');
}

describe('the keys of sealing (hooks/remote/sealing-keys.ts)', () => {
  describe('the hub keys from KUBECELL_SEALING_KEY_FILE and KUBECELL_SEALING_PREVIOUS_KEY_FILE', () => {
    it('loads the current key alone, as before, and nothing when the variable is unset', () => {
      const keys = loadSealingKeysFromEnv(
        { KUBECELL_SEALING_KEY_FILE: '/keys/sealing-key.pem' },
        read,
      );
      expect(keys && publicKeyPemOf(keys.current)).to.equal(publicKeyPemOf(hub.privateKey));
      expect(keys).to.not.have.property('previous');
      expect(loadSealingKeysFromEnv({}, read)).to.equal(undefined);
    });

    it('loads the previous key of a rotation beside it (the same key twice counts once)', () => {
      const keys = loadSealingKeysFromEnv(
        {
          KUBECELL_SEALING_KEY_FILE: '/keys/sealing-key.pem',
          KUBECELL_SEALING_PREVIOUS_KEY_FILE: '/keys/previous-sealing-key.pem',
        },
        read,
      );
      expect(keys?.previous && keyId(keys.previous)).to.equal(keyId(old.privateKey));
      const same = loadSealingKeysFromEnv(
        {
          KUBECELL_SEALING_KEY_FILE: '/keys/sealing-key.pem',
          KUBECELL_SEALING_PREVIOUS_KEY_FILE: '/keys/sealing-key.pem',
        },
        read,
      );
      expect(same).to.not.have.property('previous');
    });

    it('names the variable when a file is missing or holds no key, without its content', () => {
      for (const variable of ['KUBECELL_SEALING_KEY_FILE', 'KUBECELL_SEALING_PREVIOUS_KEY_FILE']) {
        for (const [path, why] of [
          ['/keys/missing', 'cannot be read'],
          ['/keys/bad', 'not a PEM private key'],
        ] as const) {
          const env = { KUBECELL_SEALING_KEY_FILE: '/keys/sealing-key.pem', [variable]: path };
          const message = problems(env);
          expect(message).to.contain(`${variable}="${path}"`).and.contain(why);
          expect(message).not.to.contain('nope');
        }
      }
    });

    it('refuses a previous key without a current one', () => {
      expect(problems({ KUBECELL_SEALING_PREVIOUS_KEY_FILE: '/keys/sealing-key.pem' })).to.contain(
        'KUBECELL_SEALING_PREVIOUS_KEY_FILE is set but KUBECELL_SEALING_KEY_FILE is not',
      );
    });
  });

  it("names a key by the SHA-256 of its public key's DER SubjectPublicKeyInfo, private or public alike", () => {
    const spki = hub.publicKey.export({ type: 'spki', format: 'der' });
    const expected = `sha256:${createHash('sha256').update(spki).digest('hex')}`;
    expect(keyId(hub.privateKey)).to.equal(expected);
    expect(keyId(hub.publicKey)).to.equal(expected);
    expect(keyId(old.privateKey)).to.not.equal(expected);
  });

  describe("an agent's signing key", () => {
    it('round-trips the private key through PEM and the public key through its text', () => {
      const key = generateAgentKey();
      expect(key.asymmetricKeyType).to.equal('ed25519');
      expect(keyId(parseAgentPrivateKey(agentPrivateKeyPem(key))!)).to.equal(keyId(key));
      const text = agentPublicKeyText(key);
      expect(text).to.have.length(60);
      expect(keyId(parseAgentPublicKey(text)!)).to.equal(keyId(key));
    });

    it('takes no other kind of key, and nothing that is not one', () => {
      const rsaText = hub.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
      for (const text of [
        rsaText,
        'not base64!',
        '',
        `${agentPublicKeyText(generateAgentKey())}\n`,
        7,
      ]) {
        expect(parseAgentPublicKey(text), String(text).slice(0, 20)).to.equal(undefined);
      }
      expect(parseAgentPrivateKey(pem(hub.privateKey))).to.equal(undefined);
      expect(parseAgentPrivateKey('garbage')).to.equal(undefined);
    });
  });
});
