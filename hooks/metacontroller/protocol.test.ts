import { expect } from 'chai';
import fc from 'fast-check';
import {
  childKey,
  findObject,
  listObjects,
  objectKey,
  toObjectMap,
  type KubernetesObject,
} from './protocol.js';

const svc = (name: string, namespace?: string): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: namespace === undefined ? { name } : { name, namespace },
});

describe('metacontroller v2 protocol helpers', () => {
  describe('childKey', () => {
    it('writes Kind.version for the core group', () => {
      expect(childKey('v1', 'Service')).to.equal('Service.v1');
      expect(childKey('v1', 'Node')).to.equal('Node.v1');
    });

    it('writes Kind.group/version for a named group', () => {
      expect(childKey('k3k.io/v1beta1', 'Cluster')).to.equal('Cluster.k3k.io/v1beta1');
      expect(childKey('networking.k8s.io/v1', 'NetworkPolicy')).to.equal(
        'NetworkPolicy.networking.k8s.io/v1',
      );
    });
  });

  describe('objectKey', () => {
    it('is namespace/name for a namespaced object', () => {
      expect(objectKey(svc('api', 'tenant-a'))).to.equal('tenant-a/api');
    });

    it('is the name alone for a cluster-scoped object', () => {
      expect(objectKey({ metadata: { name: 'gpu-node-1' } })).to.equal('gpu-node-1');
      expect(objectKey({ metadata: { name: 'gpu-node-1', namespace: '' } })).to.equal('gpu-node-1');
    });
  });

  describe('toObjectMap', () => {
    it('groups objects the way Metacontroller sends them', () => {
      const node: KubernetesObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } };
      const cluster: KubernetesObject = {
        apiVersion: 'k3k.io/v1beta1',
        kind: 'Cluster',
        metadata: { name: 'vc1', namespace: 'tenant-a' },
      };
      expect(toObjectMap([svc('a', 'ns1'), svc('a', 'ns2'), node, cluster])).to.deep.equal({
        'Service.v1': { 'ns1/a': svc('a', 'ns1'), 'ns2/a': svc('a', 'ns2') },
        'Node.v1': { n1: node },
        'Cluster.k3k.io/v1beta1': { 'tenant-a/vc1': cluster },
      });
    });

    it('refuses two objects with the same type and key', () => {
      expect(() => toObjectMap([svc('a', 'ns'), svc('a', 'ns')])).to.throw(
        'toObjectMap: duplicate object Service.v1 ns/a',
      );
    });

    it('round-trips through listObjects for any set of distinct objects', () => {
      const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.tuple(fc.option(name, { nil: undefined }), name), {
            selector: ([ns, n]) => `${ns ?? ''}/${n}`,
          }),
          (pairs) => {
            const objects = pairs.map(([ns, n]) => svc(n, ns));
            const byKey = [...objects].sort((a, b) =>
              objectKey(a) < objectKey(b) ? -1 : objectKey(a) > objectKey(b) ? 1 : 0,
            );
            expect(listObjects(toObjectMap(objects), 'Service.v1')).to.deep.equal(byKey);
          },
        ),
      );
    });
  });

  describe('listObjects', () => {
    it('lists one type sorted by key, and nothing for an absent type', () => {
      const map = toObjectMap([svc('b', 'ns'), svc('a', 'ns'), svc('c', 'aa')]);
      expect(listObjects(map, 'Service.v1').map(objectKey)).to.deep.equal(['aa/c', 'ns/a', 'ns/b']);
      expect(listObjects(map, 'Pod.v1')).to.deep.equal([]);
    });
  });

  describe('findObject', () => {
    it('finds by name and namespace, or by name when cluster-scoped', () => {
      const node: KubernetesObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } };
      const map = toObjectMap([svc('a', 'ns'), node]);
      expect(findObject(map, 'Service.v1', 'a', 'ns')).to.equal(map['Service.v1']?.['ns/a']);
      expect(findObject(map, 'Service.v1', 'a')).to.equal(undefined);
      expect(findObject(map, 'Node.v1', 'n1')).to.equal(node);
      expect(findObject(map, 'Pod.v1', 'x', 'ns')).to.equal(undefined);
    });
  });
});
