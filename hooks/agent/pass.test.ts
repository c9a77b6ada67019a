import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { clusterReport } from '../cell/cluster-report.js';
import { DEFAULT_CELL_CONFIG } from '../cell/config.js';
import { observeCluster } from '../cell/observe.js';
import { NOW, gpuNode, pod, readyProvider, relatedOf } from '../cell/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { parseCellReport, serializeCellReport } from '../remote/report.js';
import { unseal } from '../remote/sealing.js';
import { parseAgentPublicKey, publicKeyPemOf } from '../remote/sealing-keys.js';
import type { AgentConfig } from './config.js';
import { runPass } from './pass.js';
import { SEALED_DIGEST_ANNOTATION } from './seal-kubeconfigs.js';
import {
  agentWorkObjects,
  deliveredVirtualCluster,
  emptyConfigMap,
  fakeApi,
  k3kKubeconfigSecret,
  type FakeApi,
} from './testing.js';

const REPORT_PATH = '/api/v1/namespaces/kubecell-system/configmaps/kubecell-cell-report-a100';
const SEALED_PATH = '/api/v1/namespaces/tenant-a/configmaps/kubecell-team-a-sealed-kubeconfig';
const IDENTITY_PATH = '/api/v1/namespaces/kubecell-system/configmaps/kubecell-cell-agent-identity';
const VC_UID = '0b7f2d6e-1111-4222-8333-444455556666';
const KUBECONFIG =
  'apiVersion: v1\nkind: Config\nclusters: []\nusers:\n- name: a\n  user: {token: t0p-s3cret}\n';

const hub = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PUBLIC_PEM = publicKeyPemOf(hub.privateKey);

const config: AgentConfig = {
  intervalSeconds: 30,
  machineProfiles: ['a100'],
  managedCluster: 'cell-remote',
  publicKeyFile: '/etc/kubecell/sealing/public-key.pem',
  cell: DEFAULT_CELL_CONFIG,
};
const readFile = (path: string): string => {
  if (path === config.publicKeyFile) return PUBLIC_PEM;
  throw new Error('ENOENT');
};
const later = (seconds: number): Date => new Date(NOW.getTime() + seconds * 1000);

/** What a report is computed from. */
function observed(): KubernetesObject[] {
  return [
    gpuNode('n1', {}, { address: '10.0.0.1' }),
    gpuNode('n2', {}, { address: '10.0.0.2' }),
    ...readyProvider(),
    pod('p1', 'kube-system', 'n1', [{ cpu: '1' }]),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubecell-system' } },
  ];
}

/**
 * The managed cluster with the agent's work applied: the report ConfigMap, the signing key's
 * Secret and the identity ConfigMap it created, empty.
 */
function cluster(): KubernetesObject[] {
  return [
    ...observed(),
    ...agentWorkObjects(),
    emptyConfigMap('kubecell-system', 'kubecell-cell-report-a100'),
  ];
}

/**
 * A host namespace the hub delivered for VirtualCluster team-a with the ConfigMap to seal into,
 * and k3k's kubeconfig in it.
 */
function delivered(kubeconfig = KUBECONFIG): KubernetesObject[] {
  const [namespace, configMap] = deliveredVirtualCluster('tenant-a', 'team-a', VC_UID);
  return [namespace!, k3kKubeconfigSecret('tenant-a', 'team-a', kubeconfig), configMap!];
}

const pass = (api: FakeApi, now = NOW, settings = config) =>
  runPass({ api, config: settings, now, readFile });
const dataOf = (api: FakeApi, path: string, key: string): string | undefined =>
  (api.objects.get(path) as { data?: Record<string, string> } | undefined)?.data?.[key];
/** What the hub reads out of the sealed ConfigMap, with the key the agent published. */
const opened = (api: FakeApi): string => {
  const agentKey = parseAgentPublicKey(dataOf(api, IDENTITY_PATH, 'signingKey'));
  const expected = { uid: VC_UID, managedCluster: 'cell-remote', agentKey };
  return unseal({ current: hub.privateKey }, expected, dataOf(api, SEALED_PATH, 'sealed')!)
    .plaintext;
};

describe('the cell agent pass (hooks/agent)', () => {
  it('writes the report the Cell functions compute from the same objects', async () => {
    const api = fakeApi(...cluster());
    const summary = await pass(api);
    expect(summary).to.deep.equal({
      reports: { a100: 'updated' },
      identity: 'updated',
      sealed: {},
      errors: [],
      secrets: [],
    });
    const expected = clusterReport(
      'a100',
      observeCluster(relatedOf(observed()), 'a100', DEFAULT_CELL_CONFIG),
      NOW,
    );
    expect(dataOf(api, REPORT_PATH, 'report')).to.equal(serializeCellReport(expected));
    expect(parseCellReport(dataOf(api, REPORT_PATH, 'report')!).nodeCount).to.deep.equal({
      total: 2,
      ready: 2,
    });
  });

  it('writes nothing on a quiet cluster until the 300 s heartbeat, and at once on a change', async () => {
    const api = fakeApi(...cluster());
    await pass(api);
    const written = api.writes.length; // the report, the signing key and its public half
    expect((await pass(api, later(30))).reports).to.deep.equal({ a100: 'unchanged' });
    expect((await pass(api, later(299))).reports).to.deep.equal({ a100: 'unchanged' });
    expect(api.writes).to.have.length(written);
    expect((await pass(api, later(300))).reports).to.deep.equal({ a100: 'updated' });
    expect(parseCellReport(dataOf(api, REPORT_PATH, 'report')!).observedAt).to.equal(
      '2026-11-30T12:05:00Z',
    );
    api.put(pod('p2', 'kube-system', 'n2', [{ cpu: '2' }]));
    expect((await pass(api, later(330))).reports).to.deep.equal({ a100: 'updated' });
    expect(parseCellReport(dataOf(api, REPORT_PATH, 'report')!).resources['cpu']).to.include({
      requested: '3',
    });
    expect(api.writes).to.have.length(written + 2);
  });

  it('seals k3k kubeconfig for the VirtualCluster UID, once, and again when it changes', async () => {
    const api = fakeApi(...cluster(), ...delivered());
    expect((await pass(api)).sealed).to.deep.equal({ 'tenant-a': 'updated' });
    const sealed = dataOf(api, SEALED_PATH, 'sealed')!;
    expect(opened(api)).to.equal(KUBECONFIG);
    expect(JSON.stringify(api.objects.get(SEALED_PATH))).not.to.contain('t0p-s3cret');
    expect(api.objects.get(SEALED_PATH)!.metadata.annotations?.[SEALED_DIGEST_ANNOTATION]).to.match(
      /^sha256:[0-9a-f]{64}$/,
    );
    expect((await pass(api, later(30))).sealed).to.deep.equal({ 'tenant-a': 'unchanged' });
    expect(dataOf(api, SEALED_PATH, 'sealed')).to.equal(sealed);
    api.put(delivered(`${KUBECONFIG}# rotated\n`)[1]!);
    expect((await pass(api, later(60))).sealed).to.deep.equal({ 'tenant-a': 'updated' });
    expect(opened(api)).to.contain('# rotated');
  });

  it('waits for k3k and for the works, and says when it has no public key, never logging the kubeconfig', async () => {
    const [namespace, secret, sealedConfigMap] = delivered();
    const waiting = fakeApi(...cluster(), namespace!, sealedConfigMap!);
    expect((await pass(waiting)).sealed).to.deep.equal({ 'tenant-a': 'waiting' });
    // Before OCM's work agent created the ConfigMaps: nothing written, nothing failed.
    const early = fakeApi(...observed(), namespace!, secret!);
    expect(await pass(early)).to.deep.equal({
      reports: { a100: 'waiting' },
      identity: 'waiting',
      sealed: { 'tenant-a': 'waiting' },
      errors: [],
      // What the agent watches: k3k's kubeconfig, by name, in the namespace the work delivered.
      secrets: [{ namespace: 'tenant-a', name: 'k3k-team-a-kubeconfig' }],
    });
    expect(early.writes).to.deep.equal([]);
    const noKey = fakeApi(...cluster(), ...delivered());
    const summary = await pass(noKey, NOW, { ...config, publicKeyFile: undefined });
    expect(summary.sealed).to.deep.equal({ 'tenant-a': 'failed' });
    expect(summary.errors).to.deep.equal([
      "the hub's public sealing key: ConfigMap kubecell-system/kubecell-sealing-public-key has no public-key.pem: the hub has no sealing key (KUBECELL_SEALING_KEY_FILE)",
    ]);
    noKey.put({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kubecell-sealing-public-key', namespace: 'kubecell-system' },
      data: { 'public-key.pem': PUBLIC_PEM },
    } as KubernetesObject);
    const keyed = await pass(noKey, later(30), { ...config, publicKeyFile: undefined });
    expect(keyed.sealed).to.deep.equal({ 'tenant-a': 'updated' });
    expect(JSON.stringify([summary, keyed])).not.to.contain('t0p-s3cret');
  });

  it('writes no report when a read fails, and reports the failure', async () => {
    const api = fakeApi(...cluster());
    api.failing.add('/api/v1/pods');
    const summary = await pass(api);
    expect(summary.reports).to.deep.equal({ a100: 'failed' });
    expect(summary.errors).to.deep.equal([
      'reading the cluster: GET /api/v1/pods: HTTP 403: forbidden',
    ]);
    expect(api.writes.filter((write) => write.includes(REPORT_PATH))).to.deep.equal([]);
  });

  it('fails only the profile whose Nodes carry an unreadable TopoLVM annotation', async () => {
    const bad = gpuNode(
      'h1',
      {},
      {
        profile: 'h100',
        annotations: { 'capacity.topolvm.io/ssd': 'lots' },
      },
    );
    const api = fakeApi(...cluster(), bad);
    const summary = await pass(api, NOW, { ...config, machineProfiles: ['a100', 'h100'] });
    expect(summary.reports).to.deep.equal({ a100: 'updated', h100: 'failed' });
    expect(summary.errors[0]).to.match(/^report h100: /);
  });
});
