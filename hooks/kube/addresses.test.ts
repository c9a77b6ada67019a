import { expect } from 'chai';
import { validateCell, validateVirtualCluster } from '../generated/validators.js';
import { isDnsHostname, isEndpointAddress, isIpAddress, isPort } from './addresses.js';
import { PROXY_INJECTION } from './testing.js';

const IPS = [
  '10.0.0.7',
  '0.0.0.0',
  '255.255.255.255',
  '::1',
  '::',
  'fd00::7',
  'FD00::7',
  '2001:db8:0:0:0:0:0:1',
  '::ffff:10.0.0.1',
];
const HOSTNAMES = [
  'localhost',
  'node-1',
  'api.cell1.example.com',
  '1node.example',
  `${'a'.repeat(63)}.example`,
  `${Array.from({ length: 4 }, () => 'a'.repeat(62)).join('.')}.a`,
];
/** Refused as IP and as hostname, with why. */
const HOSTILE: Array<[string, unknown]> = [
  ['the finding', PROXY_INJECTION],
  ['U+2028 after an IP', '10.0.0.7\u2028proxy-url: http://evil.example'],
  ['U+2029 after an IP', '10.0.0.7\u2029'],
  ['U+0085 after an IP', '10.0.0.7\u0085'],
  ['CR', '10.0.0.7\r'],
  ['LF', '10.0.0.7\n'],
  ['CRLF in a hostname', 'api.example\r\nproxy-url: http://evil.example'],
  ['a trailing space', '10.0.0.7 '],
  ['a leading space', ' api.example'],
  ['a tab', 'api\t.example'],
  ['brackets', '[::1]'],
  ['a fragment', 'api.example#x'],
  ['a port', 'api.example:6443'],
  ['a URL', 'https://api.example'],
  ['a path', 'api.example/x'],
  ['userinfo', 'user@api.example'],
  ['an IPv6 zone', 'fe80::1%eth0'],
  ['an encoded IPv6 zone', 'fe80::1%25eth0'],
  ['a leading zero (octal to some parsers)', '010.0.0.7'],
  ['three octets', '10.0.7'],
  ['an octet over 255', '10.0.0.256'],
  ['a CIDR', '10.0.0.0/24'],
  ['uppercase (DNS-1123 is lowercase)', 'API.example'],
  ['an underscore', 'api_1.example'],
  ['a non-ASCII letter', 'äpi.example'],
  ['an empty label', 'api..example'],
  ['a trailing dot', 'api.example.'],
  ['a label starting with -', '-api.example'],
  ['a label ending with -', 'api-.example'],
  ['a label of 64 characters', `${'a'.repeat(64)}.example`],
  ['254 characters', `${Array.from({ length: 4 }, () => 'a'.repeat(62)).join('.')}.ab`],
  ['a numeric last label (a URL parser reads IPv4)', '1.2.3.999'],
  ['one number (a URL parser reads 127.0.0.1)', '2130706433'],
  ['a hex last label', 'api.0x7f'],
  ['a last label starting with a digit', 'api.1example'],
  ['the empty string', ''],
  ['a number', 167772167],
  ['null', null],
  ['undefined', undefined],
  ['an object', { address: '10.0.0.7' }],
];

/**
 * Whether the generated validators (the CRD schema, as the webhook and `kubecell validate` check
 * it) take `value` as a Cell's status.nodeAddresses[].address or a VirtualCluster's
 * status.endpoint.address (the schema of status.resolved.endpointAddress too).
 */
function schemaCheck(field: 'nodeAddress' | 'endpointAddress'): (value: unknown) => boolean {
  const metadata = { name: 'x', namespace: 'kubecell-system' };
  return (value) =>
    field === 'nodeAddress'
      ? validateCell({
          apiVersion: 'kubecell.io/v1alpha1',
          kind: 'Cell',
          metadata,
          spec: { managedClusterRef: { name: 'cluster1' }, machineProfile: { name: 'a100' } },
          status: { nodeAddresses: [{ node: 'n1', address: value }] },
        })
      : validateVirtualCluster({
          apiVersion: 'kubecell.io/v1alpha1',
          kind: 'VirtualCluster',
          metadata,
          spec: { cellRef: { name: 'cell1' }, classRef: { name: 'small' } },
          status: { endpoint: { address: value, port: 31234 } },
        });
}

describe('addresses KubeCell writes (hooks/kube/addresses.ts, issue 23)', () => {
  it('takes IPv4 in dotted-decimal form and IPv6 without a zone as IP addresses', () => {
    for (const ip of IPS) {
      expect(isIpAddress(ip), ip).to.equal(true);
      expect(isEndpointAddress(ip), ip).to.equal(true);
    }
    for (const hostname of HOSTNAMES) expect(isIpAddress(hostname), hostname).to.equal(false);
  });

  it('takes DNS-1123 hostnames (lowercase, labels of 63, 253 in all) as endpoint addresses', () => {
    expect(HOSTNAMES[HOSTNAMES.length - 1]).to.have.length(253);
    for (const hostname of HOSTNAMES) {
      expect(isDnsHostname(hostname), hostname).to.equal(true);
      expect(isEndpointAddress(hostname), hostname).to.equal(true);
    }
  });

  it('refuses control and separator characters, URL syntax, zones, uppercase and overlong names', () => {
    for (const [why, value] of HOSTILE) {
      expect(isIpAddress(value), why).to.equal(false);
      expect(isDnsHostname(value), why).to.equal(false);
      expect(isEndpointAddress(value), why).to.equal(false);
    }
  });

  it('passes nothing the CRD schema refuses, and the schema refuses every hostile value too', () => {
    const schemaIp = schemaCheck('nodeAddress');
    const schemaEndpoint = schemaCheck('endpointAddress');
    for (const ip of IPS) expect(schemaIp(ip), ip).to.equal(true);
    for (const value of [...IPS, ...HOSTNAMES]) expect(schemaEndpoint(value), value).to.equal(true);
    for (const hostname of HOSTNAMES) expect(schemaIp(hostname), hostname).to.equal(false);
    // Absent is a valid status.endpoint.address (the field is optional); every other value is
    // refused by the apiserver's schema as by the hook.
    const strings = HOSTILE.filter(([, value]) => value !== undefined);
    expect(strings.filter(([, value]) => schemaEndpoint(value)).map(([why]) => why)).to.deep.equal(
      [],
    );
    expect(HOSTILE.filter(([, value]) => schemaIp(value)).map(([why]) => why)).to.deep.equal([]);
  });
});

describe('ports', () => {
  it('takes the integers from 1 to 65535, nothing else', () => {
    for (const port of [1, 80, 30000, 32767, 65535])
      expect(isPort(port), String(port)).to.equal(true);
    const refused = [
      0,
      -1,
      65536,
      70000,
      31000.5,
      NaN,
      Infinity,
      '31000',
      null,
      undefined,
      [31000],
    ];
    for (const value of refused) expect(isPort(value), String(value)).to.equal(false);
  });
});
