import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../config/env-reader.js';
import { syncHostNamespace } from '../host-namespace/sync.js';
import { hostNamespace } from '../host-namespace/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  AGENT_ENV,
  AGENT_NAMESPACE,
  FEEDBACK,
  HOST_NAMESPACE_VIRTUALCLUSTER,
  SEALING_PUBLIC_KEY_CONFIGMAP,
  SEALING_PUBLIC_KEY_KEY,
  sealedKubeconfigConfigMapName,
} from '../remote/contract.js';
import { VC_UID } from '../virtualcluster/testing.js';
import { AGENT_COMMAND, AGENT_ARGS } from './agent-work.js';
import { loadAgentConfig } from '../agent/config.js';
import { loadCellConfig } from '../cell/config.js';
import { DEFAULT_AGENT_IMAGE, loadDeliveryConfig, type DeliveryConfig } from './config.js';
import { customizeDelivery } from './customize.js';
import type { ManifestWork } from '../remote/manifest-work.js';
import { syncDelivery } from './sync.js';
import {
  CLUSTER,
  CONFIG,
  PUBLIC_KEY_PEM,
  observedWorks,
  placedVirtualCluster,
  remoteCell,
  syncRequest,
} from './testing.js';

const VC_WORK = `kubecell-vc-${VC_UID}`;

function works(related: KubernetesObject[], observed: KubernetesObject[] = [], omit?: string[]) {
  const response = syncDelivery(syncRequest(related, observed, omit ? { omit } : {}), CONFIG);
  return response.attachments as ManifestWork[];
}

function named(list: ManifestWork[], name: string): ManifestWork {
  const found = list.find((work) => work.metadata.name === name);
  expect(found, `work ${name}`).to.not.equal(undefined);
  return found as ManifestWork;
}

function manifest(work: ManifestWork, kind: string, name?: string) {
  const found = work.spec.workload.manifests.find(
    (m) => m.kind === kind && (name === undefined || m.metadata.name === name),
  );
  expect(found, `${kind} ${name ?? ''} in ${work.metadata.name}`).to.not.equal(undefined);
  return found as KubernetesObject & Record<string, unknown>;
}

describe('kubecell-delivery: the ManifestWorks of a ManagedCluster', () => {
  describe('the agent work kubecell-cell-agent', () => {
    it('is not rendered while no ManifestWork Cell binds the cluster', () => {
      expect(
        works([remoteCell({ delivery: 'Local' }), remoteCell({ cluster: 'other', name: 'x' })]),
      ).to.deep.equal([]);
    });

    it('carries the agent, its RBAC, the public key and one CreateOnly report per bound profile', () => {
      const [agent, ...rest] = works([
        remoteCell({ name: 'b', profile: 'h100' }),
        remoteCell({ name: 'a', profile: 'a100' }),
        remoteCell({ name: 'c', profile: 'a100' }),
      ]);
      expect(rest).to.deep.equal([]);
      expect(agent?.metadata).to.include({ name: 'kubecell-cell-agent', namespace: CLUSTER });
      const work = agent as ManifestWork;
      expect(work.spec.workload.manifests.map((m) => `${m.kind}/${m.metadata.name}`)).to.deep.equal(
        [
          `Namespace/${AGENT_NAMESPACE}`,
          'ServiceAccount/kubecell-cell-agent',
          'ClusterRole/kubecell-cell-agent',
          'ClusterRoleBinding/kubecell-cell-agent',
          'Role/kubecell-cell-agent',
          'RoleBinding/kubecell-cell-agent',
          `ConfigMap/${SEALING_PUBLIC_KEY_CONFIGMAP}`,
          'Secret/kubecell-cell-agent-signing-key',
          'ConfigMap/kubecell-cell-agent-identity',
          'Deployment/kubecell-cell-agent',
          'ConfigMap/kubecell-cell-report-a100',
          'ConfigMap/kubecell-cell-report-h100',
        ],
      );
      expect(manifest(work, 'ConfigMap', SEALING_PUBLIC_KEY_CONFIGMAP)['data']).to.deep.equal({
        [SEALING_PUBLIC_KEY_KEY]: PUBLIC_KEY_PEM,
      });
      const configMap = (name: string) => ({
        group: '',
        resource: 'configmaps',
        name,
        namespace: AGENT_NAMESPACE,
      });
      // Each created empty and never rewritten: the agent fills it (agent-rbac.ts).
      expect(work.spec.manifestConfigs).to.deep.equal([
        {
          resourceIdentifier: {
            ...configMap('kubecell-cell-agent-signing-key'),
            resource: 'secrets',
          },
          updateStrategy: { type: 'CreateOnly' },
        },
        {
          resourceIdentifier: configMap('kubecell-cell-agent-identity'),
          feedbackRules: [
            {
              type: 'JSONPaths',
              jsonPaths: [{ name: FEEDBACK.agentSigningKey, path: '.data.signingKey' }],
            },
          ],
          updateStrategy: { type: 'CreateOnly' },
        },
        ...['a100', 'h100'].map((profile) => ({
          resourceIdentifier: configMap(`kubecell-cell-report-${profile}`),
          feedbackRules: [
            { type: 'JSONPaths', jsonPaths: [{ name: FEEDBACK.report, path: '.data.report' }] },
          ],
          updateStrategy: { type: 'CreateOnly' },
        })),
      ]);
      // The managed cluster may be the hub itself: its kubecell-system is never deleted.
      expect(work.spec.deleteOption).to.deep.equal({
        propagationPolicy: 'SelectivelyOrphan',
        selectivelyOrphans: {
          orphaningRules: [
            { group: '', resource: 'namespaces', name: AGENT_NAMESPACE, namespace: '' },
          ],
        },
      });
    });

    it('runs the hook server image as `kubecell agent` with the profiles and the key file', () => {
      const work = named(works([remoteCell()]), 'kubecell-cell-agent');
      const deployment = manifest(work, 'Deployment') as unknown as {
        spec: {
          template: { spec: { serviceAccountName: string; containers: Record<string, unknown>[] } };
        };
      };
      const container = deployment.spec.template.spec.containers[0] as Record<string, unknown>;
      expect(container).to.include({ image: DEFAULT_AGENT_IMAGE });
      expect(container['command']).to.deep.equal(AGENT_COMMAND);
      expect(container['args']).to.deep.equal(AGENT_ARGS);
      expect(container['env']).to.deep.include({ name: AGENT_ENV.machineProfiles, value: 'a100' });
      expect(container['env']).to.deep.include({
        name: AGENT_ENV.publicKeyFile,
        value: `/etc/kubecell/sealing/${SEALING_PUBLIC_KEY_KEY}`,
      });
      expect(deployment.spec.template.spec.serviceAccountName).to.equal('kubecell-cell-agent');
    });

    it('without a sealing key: no public key ConfigMap, the agent still reports', () => {
      const withoutKey = { ...CONFIG };
      delete withoutKey.publicKeyPem;
      const [work] = syncDelivery(syncRequest([remoteCell()]), withoutKey)
        .attachments as ManifestWork[];
      const kinds = work?.spec.workload.manifests.map((m) => `${m.kind}/${m.metadata.name}`);
      expect(kinds).to.not.include(`ConfigMap/${SEALING_PUBLIC_KEY_CONFIGMAP}`);
      expect(kinds).to.include('ConfigMap/kubecell-cell-report-a100');
    });

    it('grants the agent reads cluster-wide and writes to its own ConfigMaps by name only, no RBAC', () => {
      const work = named(works([remoteCell()]), 'kubecell-cell-agent');
      const rules = (kind: string) =>
        manifest(work, kind)['rules'] as {
          apiGroups: string[];
          resources: string[];
          resourceNames?: string[];
          verbs: string[];
        }[];
      for (const rule of rules('ClusterRole')) {
        const reads = ['get', 'list', 'watch'];
        expect(rule.verbs.filter((verb) => !reads.includes(verb))).to.deep.equal([]);
        // The one watch is of the Namespaces, which the agent lists anyway.
        if (rule.verbs.includes('watch')) expect(rule.resources).to.deep.equal(['namespaces']);
        expect(rule.resources).to.not.include.members(['secrets', 'configmaps']);
        expect(rule.apiGroups).to.not.include('rbac.authorization.k8s.io');
      }
      expect(manifest(work, 'Role').metadata.namespace).to.equal(AGENT_NAMESPACE);
      expect(rules('Role')).to.deep.equal([
        {
          apiGroups: [''],
          resources: ['configmaps'],
          resourceNames: ['kubecell-cell-agent-identity', 'kubecell-cell-report-a100'],
          verbs: ['get', 'update'],
        },
        {
          apiGroups: [''],
          resources: ['configmaps'],
          resourceNames: [SEALING_PUBLIC_KEY_CONFIGMAP],
          verbs: ['get'],
        },
        {
          apiGroups: [''],
          resources: ['secrets'],
          resourceNames: ['kubecell-cell-agent-signing-key'],
          verbs: ['get', 'update'],
        },
      ]);
    });
  });

  describe('the VirtualCluster work kubecell-vc-<uid>', () => {
    it('carries the local children byte for byte, the host Namespace and the baseline', () => {
      const { vc, localChildren } = placedVirtualCluster();
      const work = named(works([remoteCell(), vc]), VC_WORK);
      expect(work.metadata).to.deep.include({ namespace: CLUSTER });
      expect(work.spec.workload.manifests.map((m) => `${m.kind}/${m.metadata.name}`)).to.deep.equal(
        [
          'Namespace/tenant-a',
          'NetworkPolicy/kubecell-deny-ingress',
          'NetworkPolicy/kubecell-allow-same-namespace',
          'NetworkPolicy/kubecell-allow-api-server',
          'NetworkPolicy/kubecell-egress',
          'ResourceQuota/kubecell-team-a-quota',
          'LimitRange/kubecell-team-a-defaults',
          'Cluster/team-a',
          'Service/kubecell-team-a-api',
          'Role/kubecell-team-a-cell-agent',
          'RoleBinding/kubecell-team-a-cell-agent',
          `ConfigMap/${sealedKubeconfigConfigMapName('team-a')}`,
        ],
      );
      expect(localChildren.map((child) => child.kind)).to.deep.equal([
        'Cluster',
        'ResourceQuota',
        'LimitRange',
        'Service',
      ]);
      for (const child of localChildren) {
        const remote = manifest(work, child.kind, child.metadata.name);
        expect(JSON.stringify(remote), `${child.kind} is the local child`).to.equal(
          JSON.stringify(child),
        );
      }
    });

    it('puts on the host Namespace what the host-namespace controller puts on a local one', () => {
      const { vc } = placedVirtualCluster();
      const work = named(works([remoteCell(), vc]), VC_WORK);
      const local = syncHostNamespace(
        { parent: hostNamespace('tenant-a'), children: {}, related: {}, finalizing: false },
        CONFIG.hostNamespace,
      );
      const policies = work.spec.workload.manifests.filter((m) => m.kind === 'NetworkPolicy');
      expect(JSON.stringify(policies)).to.equal(JSON.stringify(local.attachments));
      const namespace = manifest(work, 'Namespace');
      expect(namespace.metadata.labels).to.deep.include({
        'kubecell.io/host-namespace': 'true',
        ...local.labels,
        [HOST_NAMESPACE_VIRTUALCLUSTER.uidLabel]: VC_UID,
        'kubecell.io/virtualcluster': 'team-a',
      });
      const annotations = Object.fromEntries(
        Object.entries(local.annotations ?? {}).filter(([, value]) => value !== null),
      );
      expect(namespace.metadata.annotations).to.deep.equal({
        ...annotations,
        [HOST_NAMESPACE_VIRTUALCLUSTER.nameAnnotation]: 'team-a',
      });
    });

    it("feeds back k3k's status, the NodePort and the sealed kubeconfig; orphans the Namespace and the baseline", () => {
      const { vc } = placedVirtualCluster();
      const work = named(works([remoteCell(), vc]), VC_WORK);
      const ready = (field: string) => `.status.conditions[?(@.type=="Ready")].${field}`;
      expect(work.spec.manifestConfigs).to.deep.equal([
        {
          resourceIdentifier: {
            group: 'k3k.io',
            resource: 'clusters',
            name: 'team-a',
            namespace: 'tenant-a',
          },
          feedbackRules: [
            {
              type: 'JSONPaths',
              jsonPaths: [
                { name: 'k3kPhase', path: '.status.phase' },
                { name: 'k3kReadyStatus', path: ready('status') },
                { name: 'k3kReadyReason', path: ready('reason') },
                { name: 'k3kReadyMessage', path: ready('message') },
              ],
            },
          ],
          updateStrategy: { type: 'CreateOnly' },
        },
        {
          resourceIdentifier: {
            group: '',
            resource: 'services',
            name: 'kubecell-team-a-api',
            namespace: 'tenant-a',
          },
          feedbackRules: [
            {
              type: 'JSONPaths',
              jsonPaths: [{ name: FEEDBACK.nodePort, path: '.spec.ports[0].nodePort' }],
            },
          ],
        },
        {
          resourceIdentifier: {
            group: '',
            resource: 'configmaps',
            name: 'kubecell-team-a-sealed-kubeconfig',
            namespace: 'tenant-a',
          },
          feedbackRules: [
            {
              type: 'JSONPaths',
              jsonPaths: [{ name: FEEDBACK.sealedKubeconfig, path: '.data.sealed' }],
            },
          ],
          updateStrategy: { type: 'CreateOnly' },
        },
      ]);
      const orphans = work.spec.deleteOption?.selectivelyOrphans?.orphaningRules ?? [];
      expect(work.spec.deleteOption?.propagationPolicy).to.equal('SelectivelyOrphan');
      expect(orphans.map((rule) => `${rule.resource}/${rule.name}`)).to.deep.equal([
        'namespaces/tenant-a',
        'networkpolicies/kubecell-deny-ingress',
        'networkpolicies/kubecell-allow-same-namespace',
        'networkpolicies/kubecell-allow-api-server',
        'networkpolicies/kubecell-egress',
      ]);
    });

    it('is not rendered for a Local placement or a placement on another cluster', () => {
      const local = placedVirtualCluster({ delivery: 'Local' }).vc;
      const elsewhere = placedVirtualCluster({
        cluster: 'other',
        uid: 'other-uid',
        name: 'b',
        namespace: 'tenant-b',
      }).vc;
      const names = works([remoteCell(), local, elsewhere]).map((w) => w.metadata.name);
      expect(names).to.deep.equal(['kubecell-cell-agent']);
    });

    it('is dropped when its VirtualCluster is being deleted or gone, even though observed', () => {
      const { vc } = placedVirtualCluster();
      const observed = observedWorks(works([remoteCell(), vc]));
      const deleting = {
        ...vc,
        metadata: { ...vc.metadata, deletionTimestamp: '2026-11-30T00:01:00Z' },
      };
      expect(works([remoteCell(), deleting], observed).map((w) => w.metadata.name)).to.deep.equal([
        'kubecell-cell-agent',
      ]);
      expect(works([remoteCell()], observed).map((w) => w.metadata.name)).to.deep.equal([
        'kubecell-cell-agent',
      ]);
    });

    it('is kept as observed when its placement cannot be read, or VirtualClusters were not observed', () => {
      const { vc } = placedVirtualCluster();
      const observed = observedWorks(works([remoteCell(), vc]));
      const unreadable = { ...vc, status: {} };
      for (const attachments of [
        works([remoteCell(), unreadable], observed),
        works([remoteCell()], observed, ['VirtualCluster.kubecell.io/v1alpha1']),
      ]) {
        const kept = named(attachments as ManifestWork[], VC_WORK);
        expect(kept.metadata).to.not.have.any.keys(
          'uid',
          'resourceVersion',
          'ownerReferences',
          'finalizers',
        );
        expect(kept).to.not.have.property('status');
        expect(kept.spec).to.deep.equal((observed[1] as ManifestWork).spec);
      }
    });

    it('keeps the agent while a VirtualCluster is there, even once its Cells are gone', () => {
      const { vc } = placedVirtualCluster();
      const agent = named(works([vc]), 'kubecell-cell-agent');
      expect(
        agent.spec.workload.manifests
          .filter((m) => m.kind === 'ConfigMap')
          .map((m) => m.metadata.name),
        'no report ConfigMap',
      ).to.deep.equal([SEALING_PUBLIC_KEY_CONFIGMAP, 'kubecell-cell-agent-identity']);
      const observed = observedWorks([agent]);
      // Cells not observed at all: the agent's work stays as it is.
      expect(
        works([], observed, [
          'Cell.kubecell.io/v1alpha1',
          'VirtualCluster.kubecell.io/v1alpha1',
        ]).map((w) => w.metadata.name),
      ).to.deep.equal(['kubecell-cell-agent']);
    });
  });

  it('answers attachments only: never a label, annotation, status or finalizer of the ManagedCluster', () => {
    const { vc } = placedVirtualCluster();
    expect(Object.keys(syncDelivery(syncRequest([remoteCell(), vc]), CONFIG))).to.deep.equal([
      'attachments',
    ]);
  });

  it('customize relates the Cells of the controller namespace and every VirtualCluster', () => {
    expect(customizeDelivery({ controllerNamespace: 'platform' })).to.deep.equal({
      relatedResources: [
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'cells', namespace: 'platform' },
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', labelSelector: {} },
      ],
    });
  });
});

describe('kubecell-delivery settings', () => {
  it('defaults: the hook server image, no key, the default baseline', () => {
    const config = loadDeliveryConfig({});
    expect(config).to.include({
      agentImage: DEFAULT_AGENT_IMAGE,
      controllerNamespace: 'kubecell-system',
    });
    expect(config).to.not.have.property('publicKeyPem');
    expect(config.hostNamespace.podSecurityLevel).to.equal('baseline');
  });

  it('derives the public key the agents seal with from KUBECELL_SEALING_KEY_FILE', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const dir = mkdtempSync(path.join(tmpdir(), 'delivery-'));
    try {
      const file = path.join(dir, 'key.pem');
      writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const config = loadDeliveryConfig({
        KUBECELL_SEALING_KEY_FILE: file,
        KUBECELL_AGENT_IMAGE: 'registry.example/kubecell:1.2.3',
      });
      expect(config.publicKeyPem).to.equal(publicKey.export({ type: 'spki', format: 'pem' }));
      expect(config.agentImage).to.equal('registry.example/kubecell:1.2.3');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a bad image, a bad baseline setting and an unreadable key in one error', () => {
    let error: unknown;
    try {
      loadDeliveryConfig({
        KUBECELL_AGENT_IMAGE: 'https://not an image',
        KUBECELL_PSA_LEVEL: 'lax',
        KUBECELL_SEALING_KEY_FILE: '/nonexistent/key.pem',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).to.match(/KUBECELL_AGENT_IMAGE=.*not an image reference/);
    expect(problems).to.match(/KUBECELL_PSA_LEVEL="lax"/);
    expect(problems).to.match(/KUBECELL_SEALING_KEY_FILE=.*cannot be read/);
  });

  it('lists a bad provider-baseline name once, though two loaders read it', () => {
    let error: unknown;
    try {
      loadDeliveryConfig({ KUBECELL_K3K_CONTROLLER: 'no-slash', KUBECELL_CNI_DAEMONSET: 'x' });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const { problems } = error as ConfigError;
    expect(problems.filter((p) => p.startsWith('KUBECELL_K3K_CONTROLLER='))).to.have.length(1);
    expect(problems.filter((p) => p.startsWith('KUBECELL_CNI_DAEMONSET='))).to.have.length(1);
  });
});

describe("kubecell-delivery: the agent checks the provider baseline where the hub's settings say", () => {
  /** The environment the delivered agent Deployment gives its container. */
  function agentEnv(config: DeliveryConfig): NodeJS.ProcessEnv {
    const work = named(
      syncDelivery(syncRequest([remoteCell()]), config).attachments as ManifestWork[],
      'kubecell-cell-agent',
    );
    const deployment = manifest(work, 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
    };
    const env = deployment.spec.template.spec.containers[0]?.env ?? [];
    return Object.fromEntries(env.map(({ name, value }) => [name, value]));
  }

  it("passes the hub's KUBECELL_K3K_CONTROLLER, KUBECELL_CNI_DAEMONSET and KUBECELL_TOPOLVM_DAEMONSET", () => {
    const hub = {
      KUBECELL_K3K_CONTROLLER: 'k3k/k3k-controller',
      KUBECELL_CNI_DAEMONSET: 'kube-system/cilium',
      KUBECELL_TOPOLVM_DAEMONSET: 'storage/topolvm-node',
    };
    const env = agentEnv({ ...loadDeliveryConfig(hub), publicKeyPem: PUBLIC_KEY_PEM });
    expect(env).to.deep.include(hub);
    const agent = loadAgentConfig(env).cell;
    const cell = loadCellConfig(hub);
    expect(agent.k3kController).to.deep.equal(cell.k3kController);
    expect(agent.k3kNamespace).to.equal('k3k');
    expect(agent.cniDaemonSet).to.deep.equal({ namespace: 'kube-system', name: 'cilium' });
    expect(agent.topolvmNodeDaemonSet).to.deep.equal(cell.topolvmNodeDaemonSet);
    // The same k3k namespace the remote host namespaces' API policy admits.
    expect(loadDeliveryConfig(hub).hostNamespace.k3kNamespace).to.equal(agent.k3kNamespace);
  });

  it('passes the defaults when the hub sets none', () => {
    expect(agentEnv(loadDeliveryConfig({}))).to.deep.include({
      [AGENT_ENV.k3kController]: 'k3k-system/k3k',
      [AGENT_ENV.cniDaemonSet]: 'kube-flannel/kube-flannel-ds',
      [AGENT_ENV.topolvmDaemonSet]: 'topolvm-system/topolvm-node',
    });
  });
});
