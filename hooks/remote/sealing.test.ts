import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { sealFor, SealingError, unseal, type ExpectedSeal } from './sealing.js';
import { generateAgentKey, keyId, publicKeyPemOf, type SealingKeys } from './sealing-keys.js';
import { sealVersion1 } from './testing.js';

const hub = generateKeyPairSync('rsa', { modulusLength: 2048 });
const next = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const hubPublicPem = publicKeyPemOf(hub.privateKey);
const agent = generateAgentKey();
const intruder = generateAgentKey();
const UID = '3f1c2a9e-0000-4000-8000-000000000001';
const CLUSTER = 'gpu-west';
const KUBECONFIG =
  'apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: s3cr3t-token\n';
const KEYS: SealingKeys = { current: hub.privateKey };
const EXPECTED: ExpectedSeal = { uid: UID, managedCluster: CLUSTER, agentKey: agent };
const ORIGIN = { managedCluster: CLUSTER, signingKey: agent };

const seal = (publicPem = hubPublicPem, origin = ORIGIN) =>
  sealFor(publicPem, UID, KUBECONFIG, origin);

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
    expect((error as Error).message).not.to.contain('s3cr3t');
    return error as SealingError;
  }
  throw new Error('expected a SealingError');
}

describe('sealing a kubeconfig for the hub (hooks/remote/sealing.ts)', () => {
  it('round-trips, and says it was opened with the current hub key', () => {
    expect(unseal(KEYS, EXPECTED, seal())).to.deep.equal({
      plaintext: KUBECONFIG,
      version: 2,
      hubKey: 'current',
    });
  });

  it('writes a base64 JSON envelope version 2 naming the hub key, the cluster and the signer; no plaintext, fresh each time', () => {
    const sealed = seal();
    expect(sealed).to.match(/^[A-Za-z0-9+/]+=*$/);
    const envelope = envelopeOf(sealed);
    expect(envelope).to.include({
      v: 2,
      alg: 'RSA-OAEP-256+A256GCM',
      kid: keyId(hub.privateKey),
      cluster: CLUSTER,
      signer: keyId(agent),
    });
    expect(envelope['kid']).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(Object.keys(envelope).sort()).to.deep.equal(
      ['alg', 'cluster', 'data', 'iv', 'key', 'kid', 'sig', 'signer', 'tag', 'v'].sort(),
    );
    expect(Buffer.from(sealed, 'base64').toString('utf8')).not.to.contain('s3cr3t-token');
    expect(seal()).not.to.equal(sealed);
  });

  describe('origin', () => {
    it('refuses a seal of another ManagedCluster, naming both', () => {
      const elsewhere = seal(hubPublicPem, { managedCluster: 'gpu-east', signingKey: agent });
      expect(failure(() => unseal(KEYS, EXPECTED, elsewhere)).message).to.contain(
        'sealed by the cell agent of ManagedCluster "gpu-east", not of "gpu-west"',
      );
    });

    it('refuses a seal signed by another key than the one the cluster’s agent published', () => {
      const forged = seal(hubPublicPem, { managedCluster: CLUSTER, signingKey: intruder });
      const message = failure(() => unseal(KEYS, EXPECTED, forged)).message;
      expect(message).to.contain(`signed with key ${keyId(intruder)}, not with ${keyId(agent)}`);
    });

    it('refuses a signed seal while the cluster’s agent has published no key', () => {
      const message = failure(() =>
        unseal(KEYS, { ...EXPECTED, agentKey: undefined }, seal()),
      ).message;
      expect(message).to.contain('has not published its signing key');
    });

    it('refuses another VirtualCluster UID, a changed field, or a signer swapped with its signature', () => {
      expect(failure(() => unseal(KEYS, { ...EXPECTED, uid: 'another-uid' }, seal())).message)
        .to.contain('signature does not verify')
        .and.contain('"another-uid"');
      for (const field of ['data', 'iv', 'tag', 'key', 'sig']) {
        const tampered = withEnvelope(seal(), (envelope) => {
          envelope[field] = flipFirstByte(envelope[field]);
        });
        expect(failure(() => unseal(KEYS, EXPECTED, tampered)).message, field).to.contain(
          'signature does not verify',
        );
      }
      // Re-signed by an intruder who also claims to be the agent: the key id gives it away.
      const resigned = withEnvelope(
        seal(hubPublicPem, { managedCluster: CLUSTER, signingKey: intruder }),
        (envelope) => {
          envelope['signer'] = keyId(agent);
        },
      );
      expect(failure(() => unseal(KEYS, EXPECTED, resigned)).message).to.contain(
        'signature does not verify',
      );
    });
  });

  describe('rotation', () => {
    it('opens a seal for the previous hub key during a rotation, and says so', () => {
      const rotating: SealingKeys = { current: next.privateKey, previous: hub.privateKey };
      expect(unseal(rotating, EXPECTED, seal()).hubKey).to.equal('previous');
      const fresh = seal(publicKeyPemOf(next.privateKey));
      expect(unseal(rotating, EXPECTED, fresh)).to.include({
        hubKey: 'current',
        plaintext: KUBECONFIG,
      });
    });

    it('refuses a seal for a hub key it does not hold, naming the key ids only', () => {
      const rotated: SealingKeys = { current: next.privateKey };
      const message = failure(() => unseal(rotated, EXPECTED, seal())).message;
      expect(message).to.contain(
        `sealed for hub key ${keyId(hub.privateKey)}, which is neither the current sealing key ${keyId(next.privateKey)} nor the previous one (none)`,
      );
      const lying = withEnvelope(seal(publicKeyPemOf(other.privateKey)), (envelope) => {
        envelope['kid'] = keyId(hub.privateKey);
      });
      expect(failure(() => unseal(KEYS, EXPECTED, lying)).message).to.contain(
        'signature does not verify',
      );
    });
  });

  describe('version 1 (agents before origin signing)', () => {
    it('opens it with the current or the previous key while the cluster’s agent has no key on record', () => {
      const legacy = sealVersion1(hubPublicPem, UID, KUBECONFIG);
      const unknownAgent = { ...EXPECTED, agentKey: undefined };
      expect(unseal(KEYS, unknownAgent, legacy)).to.deep.equal({
        plaintext: KUBECONFIG,
        version: 1,
        hubKey: 'current',
      });
      const rotating: SealingKeys = { current: next.privateKey, previous: hub.privateKey };
      expect(unseal(rotating, unknownAgent, legacy).hubKey).to.equal('previous');
      expect(
        failure(() => unseal({ current: other.privateKey }, unknownAgent, legacy)).message,
      ).to.contain('no hub sealing key opens it');
      expect(failure(() => unseal(KEYS, { ...unknownAgent, uid: 'x' }, legacy)).message).to.contain(
        'authentication failed',
      );
    });

    it('refuses it once the cluster’s agent has published a signing key: no downgrade', () => {
      const legacy = sealVersion1(hubPublicPem, UID, KUBECONFIG);
      expect(failure(() => unseal(KEYS, EXPECTED, legacy)).message).to.contain(
        'envelope version 1 carries no signature',
      );
    });
  });

  it('says what is wrong with a value that is no envelope, of another version, or incomplete', () => {
    expect(failure(() => unseal(KEYS, EXPECTED, 'not base64 json')).message).to.contain(
      'not a sealed value',
    );
    const v3 = withEnvelope(seal(), (envelope) => {
      envelope['v'] = 3;
    });
    expect(failure(() => unseal(KEYS, EXPECTED, v3)).message).to.contain('envelope version 3');
    const partial = withEnvelope(seal(), (envelope) => {
      delete envelope['tag'];
      delete envelope['signer'];
    });
    expect(failure(() => unseal(KEYS, EXPECTED, partial)).message).to.contain('lacks tag, signer');
  });

  it('refuses to seal with something that is not an RSA public key, for an empty UID or cluster', () => {
    expect(failure(() => seal('garbage')).message).to.contain('not a PEM public key');
    const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const ecPem = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(failure(() => seal(ecPem)).message).to.contain('not an RSA key');
    expect(failure(() => sealFor(hubPublicPem, '', KUBECONFIG, ORIGIN)).message).to.contain(
      'UID is empty',
    );
    expect(
      failure(() => sealFor(hubPublicPem, UID, KUBECONFIG, { ...ORIGIN, managedCluster: '' }))
        .message,
    ).to.contain('ManagedCluster name is empty');
  });
});
