import { expect } from 'chai';
import { isLabelKey, isLabelValue } from './labels.js';

describe('label keys and values (Kubernetes qualified names)', () => {
  it('accepts keys with and without a DNS-subdomain prefix', () => {
    for (const key of ['zone', 'topology.kubernetes.io/zone', 'example.com/tier', 'a', 'A_b-c.d']) {
      expect(isLabelKey(key), key).to.equal(true);
    }
  });

  it('refuses empty parts, bad ends, upper-case prefixes, long names and other characters', () => {
    for (const key of [
      '',
      '/zone',
      'example.com/',
      '-zone',
      'zone-',
      'Example.com/zone',
      `${'a'.repeat(64)}`,
      `${'a'.repeat(254)}/zone`,
      'zone\u2028x',
      'a/b/c',
      7,
    ]) {
      expect(isLabelKey(key), JSON.stringify(key)).to.equal(false);
    }
  });

  it('accepts empty and 63-character values, refuses 64 and other characters', () => {
    expect(isLabelValue('')).to.equal(true);
    expect(isLabelValue('a'.repeat(63))).to.equal(true);
    expect(isLabelValue('a'.repeat(64))).to.equal(false);
    expect(isLabelValue('b\nc')).to.equal(false);
  });
});
