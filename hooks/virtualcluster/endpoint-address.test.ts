// Issue 23: a VirtualCluster never resolves to, writes, or builds a server URL from an endpoint
// address that is not an IP address or DNS-1123 hostname, whatever its Cell's status lists or
// its own stored snapshot holds (both can be written around the controllers).
import { expect } from 'chai';
import type { CellNodeAddress, VirtualCluster } from '../generated/types/index.js';
import { validateVirtualCluster } from '../generated/validators.js';
import { HOSTILE_ADDRESSES, HOSTILE_BYTES } from '../kube/testing.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import { chooseEndpoint } from './resolve.js';
import {
  LATER,
  acceptedRelated,
  cell,
  condition,
  hostNamespace,
  resolvedWorld,
  runSync,
  smallClass,
  statusOf,
  syncRequest,
  validatedSync,
  virtualCluster,
  withStatus,
} from './testing.js';

const hostileEntries = (): CellNodeAddress[] =>
  HOSTILE_ADDRESSES.map((address, i) => ({ node: `node-${String(i)}`, address }));

describe('VirtualCluster endpoint addresses (issue 23)', () => {
  it('skips Cell entries that are not IP addresses or DNS-1123 hostnames', () => {
    const good = { node: 'node-z', address: '10.0.12.9' };
    for (let i = 0; i < 20; i += 1) {
      expect(chooseEndpoint([...hostileEntries(), good], `uid-${i}`)).to.deep.equal(good);
    }
    expect(chooseEndpoint(hostileEntries(), 'uid')).to.equal(undefined);
  });

  it('stays Pending with NoEndpointAddress when the Cell lists only such entries', () => {
    const response = runSync(virtualCluster(), [
      cell({ addresses: hostileEntries() }),
      smallClass(),
      hostNamespace(),
    ]);
    expect(statusOf(response).phase).to.equal('Pending');
    expect(statusOf(response).resolved).to.equal(undefined);
    expect(condition(response, 'Resolved')).to.deep.include({ reason: 'NoEndpointAddress' });
    expect(response.children).to.deep.equal([]);
    expect(JSON.stringify(response)).not.to.match(HOSTILE_BYTES);
  });

  it('resolves to the one usable entry, with a status the CRD accepts', () => {
    const good = { node: 'node-z', address: 'fd00::12:9' };
    const related = [
      cell({ addresses: [...hostileEntries(), good] }),
      smallClass(),
      hostNamespace(),
    ];
    const first = runSync(virtualCluster(), related);
    expect(statusOf(first).resolved?.endpointAddress).to.equal('fd00::12:9');
    expect(JSON.stringify(first)).not.to.match(HOSTILE_BYTES);
    const vc: VirtualCluster = { ...virtualCluster(), status: statusOf(first) };
    expect(validateVirtualCluster(vc), JSON.stringify(validateVirtualCluster.errors)).to.equal(
      true,
    );
  });

  it('is not called with a stored snapshot whose endpoint address is not one: 400 naming it', () => {
    // The schema refuses it, so no server URL is ever built from it, and Metacontroller changes
    // nothing (every child kept) while the hook refuses the request.
    for (const hostile of HOSTILE_ADDRESSES) {
      const { vc, children } = resolvedWorld();
      const stored = withStatus(vc, {
        ...vc.status,
        resolved: { ...vc.status!.resolved, endpointAddress: hostile },
      });
      expect(() => validatedSync(syncRequest(stored, acceptedRelated(), children), LATER), hostile)
        .to.throw(InvalidHookInputError)
        .with.property('message')
        .that.includes('status.resolved.endpointAddress');
    }
  });
});
