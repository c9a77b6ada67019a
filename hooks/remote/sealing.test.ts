import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { ConfigError } from '../config/env-reader.js';
import { loadSealingKeyFromEnv, publicKeyPemOf, sealFor, SealingError, unseal } from './sealing.js';

const hub = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const hubPrivatePem = hub.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const hubPublicPem = publicKeyPemOf(hub.privateKey);
const UID = '3f1c2a9e-0000-4000-8000-000000000001';
const KUBECONFIG =
  'apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: s3cr3t-token\n';

function envelopeOf(sealed: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(sealed, 'base64').toString('utf8')) as Record<string, unknown>;
}
function withEnvelope(sealed: string, change: (envelope: Record<string, unknown>) => void): string {
  const envelope = envelopeOf(sealed);
  change(envelope);
  return Buffer.from(JSON.stringify(envelope)).toString('base64');
}
function flipFirstByte(base64: unknown): string {
  const bytes = Buffer.from(base64 as string, 'base64');
  bytes[0] = (bytes[0] ?? 0) ^ 0xff;
  return bytes.toString('base64');
}
function failure(run: () => unknown): SealingError {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(SealingError);
    return error as SealingError;
  }
  throw new Error('expected a SealingError');
}

describe('sealing a kubeconfig for the hub (hooks/remote/sealing.ts)', () => {
  it('round-trips with the private key as a KeyObject or as PEM', () => {
    const sealed = sealFor(hubPublicPem, UID, KUBECONFIG);
    expect(unseal(hub.privateKey, UID, sealed)).to.equal(KUBECONFIG);
    expect(unseal(hubPrivatePem, UID, sealed)).to.equal(KUBECONFIG);
  });

  it('writes a versioned base64 JSON envelope with no plaintext in it, fresh each time', () => {
    const sealed = sealFor(hubPublicPem, UID, KUBECONFIG);
    expect(sealed).to.match(/^[A-Za-z0-9+/]+=*$/);
    const envelope = envelopeOf(sealed);
    expect(envelope).to.include({ v: 1, alg: 'RSA-OAEP-256+A256GCM' });
    expect(Object.keys(envelope).sort()).to.deep.equal(['alg', 'data', 'iv', 'key', 'tag', 'v']);
    expect(Buffer.from(sealed, 'base64').toString('utf8')).not.to.contain('s3cr3t-token');
    expect(sealFor(hubPublicPem, UID, KUBECONFIG)).not.to.equal(sealed);
  });

  it('refuses another VirtualCluster UID, naming the UID and not the secret', () => {
    const sealed = sealFor(hubPublicPem, UID, KUBECONFIG);
    const error = failure(() => unseal(hub.privateKey, 'another-uid', sealed));
    expect(error.message).to.contain('authentication failed').and.contain('"another-uid"');
    expect(error.message).not.to.contain('s3cr3t');
  });

  it('refuses a changed ciphertext, iv or tag', () => {
    const sealed = sealFor(hubPublicPem, UID, KUBECONFIG);
    for (const field of ['data', 'iv', 'tag']) {
      const tampered = withEnvelope(sealed, (envelope) => {
        envelope[field] = flipFirstByte(envelope[field]);
      });
      expect(failure(() => unseal(hub.privateKey, UID, tampered)).message, field).to.contain(
        'authentication failed',
      );
    }
  });

  it('refuses a key that did not seal it, and a wrapped key that was changed', () => {
    const sealed = sealFor(hubPublicPem, UID, KUBECONFIG);
    expect(failure(() => unseal(other.privateKey, UID, sealed)).message).to.contain(
      'does not open it',
    );
    const tampered = withEnvelope(sealed, (envelope) => {
      envelope['key'] = flipFirstByte(envelope['key']);
    });
    expect(failure(() => unseal(hub.privateKey, UID, tampered)).message).to.contain(
      'does not open it',
    );
  });

  it('says what is wrong with a value that is no envelope, or of another version', () => {
    expect(failure(() => unseal(hub.privateKey, UID, 'not base64 json')).message).to.contain(
      'not a sealed value',
    );
    const sealed = sealFor(hubPublicPem, UID, KUBECONFIG);
    const v2 = withEnvelope(sealed, (envelope) => {
      envelope['v'] = 2;
    });
    expect(failure(() => unseal(hub.privateKey, UID, v2)).message).to.contain('envelope version 2');
    const partial = withEnvelope(sealed, (envelope) => {
      delete envelope['tag'];
    });
    expect(failure(() => unseal(hub.privateKey, UID, partial)).message).to.contain('lacks tag');
  });

  it('refuses to seal with something that is not an RSA public key, or for an empty UID', () => {
    expect(failure(() => sealFor('garbage', UID, KUBECONFIG)).message).to.contain(
      'not a PEM public key',
    );
    const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const ecPem = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(failure(() => sealFor(ecPem, UID, KUBECONFIG)).message).to.contain('not an RSA key');
    expect(failure(() => sealFor(hubPublicPem, '', KUBECONFIG)).message).to.contain('UID is empty');
  });

  it('derives the public key from the private key, PEM or KeyObject alike', () => {
    expect(publicKeyPemOf(hubPrivatePem)).to.equal(hubPublicPem);
    expect(hubPublicPem).to.match(/^-----BEGIN PUBLIC KEY-----\n/);
  });

  describe('the hub key from KUBECELL_SEALING_KEY_FILE', () => {
    const files: Record<string, string> = { '/keys/tls.key': hubPrivatePem, '/keys/bad': 'nope' };
    const read = (path: string): string => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: ${path}`);
      return text;
    };

    it('loads the key the file holds, and nothing when the variable is unset', () => {
      const key = loadSealingKeyFromEnv({ KUBECELL_SEALING_KEY_FILE: '/keys/tls.key' }, read);
      expect(key && publicKeyPemOf(key)).to.equal(hubPublicPem);
      expect(loadSealingKeyFromEnv({}, read)).to.equal(undefined);
    });

    it('names the variable when the file is missing or holds no key, without its content', () => {
      for (const [path, why] of [
        ['/keys/missing', 'cannot be read'],
        ['/keys/bad', 'not a PEM private key'],
      ] as const) {
        let error: unknown;
        try {
          loadSealingKeyFromEnv({ KUBECELL_SEALING_KEY_FILE: path }, read);
        } catch (caught) {
          error = caught;
        }
        expect(error).to.be.instanceOf(ConfigError);
        const message = (error as ConfigError).problems.join('\n');
        expect(message).to.contain(`KUBECELL_SEALING_KEY_FILE="${path}"`).and.contain(why);
        expect(message).not.to.contain('nope');
      }
    });
  });
});
