// VirtualCluster children: the kubeconfig Secret, the quota and the LimitRange defaults.
import { expect } from 'chai';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { CONTROL_PLANE_RESERVE, LIMIT_RANGE_DEFAULT_REQUEST } from './constants.js';
import {
  acceptedRelated,
  asObserved,
  byKind,
  cell,
  condition,
  hostNamespace,
  expectPublishedKubeconfig,
  k3kKubeconfigSecret,
  LATER,
  limitsClass,
  resolvedWorld,
  statusOf,
  runSync,
  VC_UID,
  virtualCluster,
  withStatus,
} from './testing.js';

describe('VirtualCluster controller', () => {
  describe('the kubeconfig Secret', () => {
    it('is published once the NodePort and k3k kubeconfig exist, server rewritten, nothing else changed', () => {
      const { vc, children } = resolvedWorld({ nodePort: 31234 });
      const response = runSync(vc, [...acceptedRelated(), k3kKubeconfigSecret()], children, LATER);
      const secret = byKind(response.children, 'Secret') as KubernetesObject & {
        data: Record<string, string>;
        type: string;
      };
      expect(secret.metadata.name).to.equal(`kubecell-team-a-${VC_UID}-admin-kubeconfig`);
      expect(secret.type).to.equal('Opaque');
      expect(Object.keys(secret.data)).to.deep.equal(['kubeconfig.yaml']);
      const text = Buffer.from(secret.data['kubeconfig.yaml']!, 'base64').toString('utf8');
      const address = statusOf(response).resolved!.endpointAddress;
      expectPublishedKubeconfig(text, `https://${address}:31234`);
      expect(statusOf(response).endpoint).to.deep.equal({ address, port: 31234 });
      // Not observed yet: not published.
      expect(condition(response, 'KubeconfigPublished')).to.deep.include({
        status: 'False',
        reason: 'SecretNotApplied',
      });
      expect(statusOf(response).credential).to.equal(undefined);

      const published = runSync(
        withStatus(vc, response.status),
        [...acceptedRelated(), k3kKubeconfigSecret()],
        [...children, asObserved(secret)],
        LATER,
      );
      expect(condition(published, 'KubeconfigPublished')).to.deep.include({ status: 'True' });
      expect(statusOf(published).credential).to.deep.equal({ secretName: secret.metadata.name });
    });

    it('is not rendered before k3k wrote its kubeconfig, nor from an unreadable one', () => {
      const { vc, children } = resolvedWorld();
      const waiting = runSync(vc, acceptedRelated(), children, LATER);
      expect(byKind(waiting.children, 'Secret')).to.equal(undefined);
      expect(condition(waiting, 'KubeconfigPublished')).to.deep.include({
        reason: 'WaitingForK3kKubeconfig',
      });
      const broken = runSync(
        vc,
        [...acceptedRelated(), k3kKubeconfigSecret('clusters: [\n')],
        children,
        LATER,
      );
      expect(byKind(broken.children, 'Secret')).to.equal(undefined);
      expect(condition(broken, 'KubeconfigPublished')).to.deep.include({
        reason: 'K3kKubeconfigInvalid',
      });
    });

    it("keeps the published Secret unchanged when k3k's Secret vanishes", () => {
      const { vc, children } = resolvedWorld();
      const withK3k = runSync(vc, [...acceptedRelated(), k3kKubeconfigSecret()], children, LATER);
      const observedSecret = asObserved(byKind(withK3k.children, 'Secret')!);
      const all = [...children, observedSecret];
      const vanished = runSync(withStatus(vc, withK3k.status), acceptedRelated(), all, LATER);
      const kept = byKind(vanished.children, 'Secret') as KubernetesObject & { data: unknown };
      expect(kept).to.not.equal(undefined);
      expect(kept.data).to.deep.equal((observedSecret as unknown as { data: unknown }).data);
      expect(kept.metadata.name).to.equal(observedSecret.metadata.name);
      expect(kept.metadata).to.not.have.property('resourceVersion');
      expect(kept.metadata.annotations ?? {}).to.not.have.property(
        'metacontroller.k8s.io/last-applied-configuration',
      );
      expect(condition(vanished, 'KubeconfigPublished')).to.deep.include({ status: 'True' });
    });
  });

  describe('quota and defaults', () => {
    it('adds the control-plane reserve to the keys the entitlement limits, and only to those', () => {
      const { first } = resolvedWorld();
      const quota = byKind(first.children, 'ResourceQuota') as unknown as {
        spec: { hard: Record<string, string> };
      };
      expect(quota.spec.hard).to.deep.equal({
        persistentvolumeclaims: '11',
        pods: '52',
        'requests.cpu': '5',
        'requests.memory': '17Gi',
        'requests.nvidia.com/gpu': '2',
        'requests.storage': '102Gi',
      });
      expect(CONTROL_PLANE_RESERVE['requests.nvidia.com/gpu']).to.equal(undefined);
      const limitRange = byKind(first.children, 'LimitRange') as unknown as {
        spec: { limits: Record<string, unknown>[] };
      };
      expect(limitRange.spec.limits).to.deep.equal([
        { type: 'Container', defaultRequest: { ...LIMIT_RANGE_DEFAULT_REQUEST } },
      ]);
    });

    it('sets default limits only for the resources whose limits the class bounds', () => {
      const vc = virtualCluster();
      const cls = limitsClass();
      vc.spec.classRef.name = cls.metadata.name;
      const response = runSync(vc, [
        cell({ addresses: [{ node: 'node-a', address: '10.0.12.7' }] }),
        cls,
        hostNamespace(),
      ]);
      const limitRange = byKind(response.children, 'LimitRange') as unknown as {
        spec: { limits: Record<string, unknown>[] };
      };
      expect(limitRange.spec.limits[0]).to.deep.include({ default: { cpu: '1', memory: '1Gi' } });
      const quota = byKind(response.children, 'ResourceQuota') as unknown as {
        spec: { hard: Record<string, string> };
      };
      expect(quota.spec.hard).to.deep.equal({
        'count/deployments.apps': '10',
        cpu: '3',
        'limits.cpu': '6',
        'limits.memory': '10Gi',
        memory: '5Gi',
        services: '9',
        'services.nodeports': '2',
        'topolvm-provisioner.storageclass.storage.k8s.io/requests.storage': '22Gi',
      });
    });
  });
});
