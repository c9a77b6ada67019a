// A VirtualCluster on a Cell with delivery ManifestWork (decision D34): no local k3k children,
// status from the ManifestWork's conditions and feedback, the kubeconfig unsealed and published.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ConfigError } from '../config/env-reader.js';
import { productApp } from '../controllers/testing.js';
import { objectsYaml, snapshotsBeside } from '../../test/support/snapshots.js';
import type { VirtualClusterStatus } from '../generated/types/index.js';
import type { CompositeSyncResponse, KubernetesObject } from '../metacontroller/protocol.js';
import { loadVirtualClusterConfig } from './config.js';
import { customizeVirtualCluster } from './customize.js';
import { chooseEndpoint } from './resolve.js';
import type { K3kCluster } from './observe-children.js';
import { k3kReadyCondition } from './child-conditions.js';
import { finalizeVirtualCluster, syncVirtualCluster } from './sync.js';
import {
  asObserved,
  cell,
  CONFIG,
  expectPublishedKubeconfig,
  K3K_RUNNING,
  type FedBackK3k,
  LATER,
  manifestWork,
  MARKER,
  NODE_ADDRESSES,
  NOW,
  REMOTE_CLUSTER,
  remoteCell,
  remoteConfig,
  remoteRelated,
  remoteResolved,
  sealedKubeconfig,
  sealingKeys,
  smallClass,
  hostNamespace,
  statusOf,
  syncRequest,
  VC_UID,
  virtualCluster,
  withFields,
  withStatus,
} from './testing.js';
import type { VirtualCluster } from '../generated/types/index.js';
import type { VirtualClusterConfig } from './config.js';

const matchSnapshot = snapshotsBeside(import.meta.url);
const ADDRESS = chooseEndpoint(NODE_ADDRESSES, VC_UID)?.address ?? '';
const WORK = `kubecell-vc-${VC_UID}`;
const SECRET = `kubecell-team-a-${VC_UID}-admin-kubeconfig`;

function sync(
  vc: VirtualCluster,
  extra: KubernetesObject[] = [],
  children: KubernetesObject[] = [],
  config: VirtualClusterConfig = remoteConfig(),
): CompositeSyncResponse {
  return syncVirtualCluster(syncRequest(vc, [...remoteRelated(), ...extra], children), config, NOW);
}

function conditions(response: CompositeSyncResponse): Record<string, [string, string]> {
  const found: Record<string, [string, string]> = {};
  for (const c of statusOf(response).conditions ?? []) found[c.type] = [c.status, c.reason];
  return found;
}

/** The work Ready waits for: applied, available, NodePort 31234 and the sealed kubeconfig. */
function readyWork(sealed = sealedKubeconfig()): KubernetesObject {
  return manifestWork({ nodePort: 31234, sealed });
}

describe('VirtualCluster on a ManifestWork Cell', () => {
  it('records delivery ManifestWork in status.resolved and renders no local k3k, quota, LimitRange or Service', () => {
    const response = sync(virtualCluster());
    const status = statusOf(response);
    expect(status.resolved?.cell).to.deep.include({
      managedClusterName: REMOTE_CLUSTER,
      delivery: 'ManifestWork',
    });
    expect(response.children).to.deep.equal([]);
    expect(status.phase).to.equal('Provisioning');
    expect(conditions(response)).to.deep.include({
      ChildrenApplied: ['False', 'WorkNotFound'],
      K3kReady: ['False', 'WorkNotFound'],
      KubeconfigPublished: ['False', 'WaitingForNodePort'],
      Ready: ['False', 'Provisioning'],
    });
    expect(condition(response, 'ChildrenApplied')).to.include(
      `ManifestWork ${WORK} does not exist in namespace ${REMOTE_CLUSTER} yet`,
    );
    expect(status.endpoint).to.equal(undefined);
    expect(status.host).to.deep.equal({ namespace: 'tenant-a' });
  });

  it('copies delivery Local from a Cell that states it, and renders the local children as before', () => {
    const local = cell();
    local.spec.delivery = 'Local';
    const response = syncVirtualCluster(
      syncRequest(virtualCluster(), [local, smallClass(), hostNamespace()]),
      CONFIG,
      NOW,
    );
    expect(statusOf(response).resolved?.cell.delivery).to.equal('Local');
    expect(response.children.map((child) => child.kind)).to.deep.equal([
      'Cluster',
      'ResourceQuota',
      'LimitRange',
      'Service',
    ]);
  });

  it('customize relates the work in the ManagedCluster namespace once resolved, and not k3k Secret', () => {
    const rules = customizeVirtualCluster(
      { parent: remoteResolved() },
      'kubecell-system',
    ).relatedResources;
    expect(rules.map((rule) => `${rule.resource} ${rule.namespace ?? ''}`.trim())).to.deep.equal([
      'configmaps kubecell-system',
      'virtualnodeclasses',
      'virtualclusters tenant-a',
      'namespaces',
      `manifestworks ${REMOTE_CLUSTER}`,
    ]);
    expect(rules.at(-1)).to.deep.equal({
      apiVersion: 'work.open-cluster-management.io/v1',
      resource: 'manifestworks',
      namespace: REMOTE_CLUSTER,
      names: [WORK],
    });
  });

  it('waits for the work: not observed, in another namespace, not applied', () => {
    const vc = remoteResolved();
    const unobserved = syncVirtualCluster(
      { ...syncRequest(vc, remoteRelated()), related: withoutWorks(vc) },
      remoteConfig(),
      NOW,
    );
    expect(conditions(unobserved).ChildrenApplied).to.deep.equal(['Unknown', 'WorkNotObserved']);
    const elsewhere = sync(vc, [manifestWork({ namespace: 'other-cluster', nodePort: 31234 })]);
    expect(conditions(elsewhere).ChildrenApplied).to.deep.equal(['False', 'WorkNotFound']);
    expect(statusOf(elsewhere).endpoint).to.equal(undefined);
    const notApplied = sync(vc, [manifestWork({ applied: false })]);
    expect(conditions(notApplied)).to.deep.include({
      ChildrenApplied: ['False', 'WorkNotApplied'],
      K3kReady: ['False', 'K3kClusterMissing'],
    });
    expect(conditions(unobserved).K3kReady).to.deep.equal(['Unknown', 'WorkNotObserved']);
    expect(conditions(elsewhere).K3kReady).to.deep.equal(['False', 'WorkNotFound']);
    expect(condition(notApplied, 'ChildrenApplied')).to.include(
      'Applied=False (AppliedManifestWorkFailed: Failed to apply manifest work)',
    );
    expect(statusOf(notApplied).phase).to.equal('Provisioning');
  });

  it("K3kReady is k3k's own Ready condition, else its phase, fed back and worded as for a local Cluster", () => {
    const vc = remoteResolved();
    const cases: [FedBackK3k, string, string][] = [
      [K3K_RUNNING, 'True', 'K3kReady'],
      [{ phase: 'Ready' }, 'True', 'K3kReady'],
      [{ phase: 'Provisioning' }, 'False', 'K3kNotReady'],
      [{}, 'False', 'K3kNotReady'],
      [{ phase: 'Ready', ready: { status: 'False', reason: 'Down' } }, 'False', 'K3kNotReady'],
      [
        {
          phase: 'Provisioning',
          ready: { status: 'False', reason: 'Provisioning', message: 'wait' },
        },
        'False',
        'K3kNotReady',
      ],
    ];
    for (const [k3k, status, reason] of cases) {
      const response = sync(vc, [
        manifestWork({ nodePort: 31234, sealed: sealedKubeconfig(), k3k }),
      ]);
      expect(conditions(response).K3kReady, JSON.stringify(k3k)).to.deep.equal([status, reason]);
      const local = k3kReadyCondition(localCluster(k3k));
      expect(condition(response, 'K3kReady'), JSON.stringify(k3k)).to.equal(local.message);
    }
    expect(
      condition(sync(vc, [manifestWork({ k3k: { phase: 'Provisioning' } })]), 'K3kReady'),
    ).to.equal('k3k does not report the Cluster ready: phase Provisioning, no Ready condition.');
  });

  it('a sealed kubeconfig that came back does not make K3kReady True: k3k not ready, or its Cluster gone', () => {
    const vc = remoteResolved();
    const provisioning = sync(vc, [
      manifestWork({ nodePort: 31234, sealed: sealedKubeconfig(), k3k: { phase: 'Provisioning' } }),
    ]);
    expect(conditions(provisioning).K3kReady).to.deep.equal(['False', 'K3kNotReady']);
    expect(statusOf(provisioning).phase).to.equal('Provisioning');
    // A stale ConfigMap sealed for an earlier VirtualCluster of the same name, k3k's Cluster gone:
    // the work agent keeps the Cluster's last values but no longer reports it available.
    const stale = sync(vc, [
      manifestWork({ nodePort: 31234, sealed: sealedKubeconfig('earlier-uid'), k3k: 'gone' }),
    ]);
    expect(conditions(stale)).to.deep.include({
      K3kReady: ['False', 'K3kClusterMissing'],
      KubeconfigPublished: ['False', 'SealedKubeconfigInvalid'],
      Ready: ['False', 'Provisioning'],
    });
    expect(condition(stale, 'K3kReady')).to.equal('The k3k Cluster does not exist yet.');
  });

  it('takes the endpoint port from the fed-back NodePort, then waits for the sealed kubeconfig', () => {
    const response = sync(remoteResolved(), [manifestWork({ nodePort: 31234 })]);
    expect(statusOf(response).endpoint).to.deep.equal({ address: ADDRESS, port: 31234 });
    expect(conditions(response)).to.deep.include({
      K3kReady: ['True', 'K3kReady'],
      KubeconfigPublished: ['False', 'WaitingForSealedKubeconfig'],
    });
    expect(response.children).to.deep.equal([]);
    expect(condition(response, 'Ready')).to.include('Waiting for');
  });

  it('without a sealing key says so and publishes nothing', () => {
    const response = sync(remoteResolved(), [readyWork()], [], CONFIG);
    expect(conditions(response).KubeconfigPublished).to.deep.equal(['False', 'SealingKeyMissing']);
    expect(response.children).to.deep.equal([]);
  });

  it('unseals the kubeconfig and publishes it on the hub through the local path, then is Ready', () => {
    const vc = remoteResolved();
    const first = sync(vc, [readyWork()]);
    expect(first.children.map((child) => `${child.kind}/${child.metadata.name}`)).to.deep.equal([
      `Secret/${SECRET}`,
    ]);
    const secret = first.children[0] as KubernetesObject & { data: Record<string, string> };
    const text = Buffer.from(secret.data['kubeconfig.yaml'] ?? '', 'base64').toString('utf8');
    expectPublishedKubeconfig(text, `https://${ADDRESS}:31234`);
    expect(conditions(first).KubeconfigPublished).to.deep.equal(['False', 'SecretNotApplied']);

    const observed = first.children.map((child) => asObserved(child));
    const ready = sync(withStatus(vc, first.status), [readyWork()], observed);
    const status = statusOf(ready);
    expect(status.phase).to.equal('Ready');
    expect(status.credential).to.deep.equal({ secretName: SECRET });
    expect(conditions(ready)).to.deep.include({
      ChildrenApplied: ['True', 'WorkApplied'],
      K3kReady: ['True', 'K3kReady'],
      KubeconfigPublished: ['True', 'KubeconfigPublished'],
      CellLive: ['True', 'LeaseFresh'],
      Ready: ['True', 'Ready'],
    });
    expect(ready.resyncAfterSeconds).to.equal(undefined);
    expect(ready.children).to.deep.equal(first.children);
  });

  it('answers a byte-identical status for the same work, though each sealing differs', () => {
    const vc = remoteResolved();
    const first = sync(vc, [readyWork()]);
    const observed = first.children.map((child) => asObserved(child));
    const next = withStatus(vc, first.status);
    const a = sync(next, [readyWork()], observed);
    const b = sync(next, [readyWork(sealedKubeconfig())], observed);
    expect(JSON.stringify(b)).to.equal(JSON.stringify(a));
    const again = sync(withStatus(next, a.status), [readyWork()], observed);
    expect(JSON.stringify(statusOf(again))).to.equal(JSON.stringify(statusOf(a)));
  });

  it('a kubeconfig sealed for another VirtualCluster is refused without echo, and the published Secret is kept', () => {
    const vc = remoteResolved();
    const first = sync(vc, [readyWork()]);
    const observed = first.children.map((child) => asObserved(child));
    const replayed = sealedKubeconfig('another-uid', withFields('top', [`# ${MARKER}`]));
    const response = sync(withStatus(vc, first.status), [readyWork(replayed)], observed);
    // The published Secret still points at the endpoint: it stays published and is kept.
    expect(response.children.map((child) => child.metadata.name)).to.deep.equal([SECRET]);
    expect(statusOf(response).phase).to.equal('Ready');

    const unpublished = sync(vc, [readyWork(replayed)]);
    expect(conditions(unpublished).KubeconfigPublished).to.deep.equal([
      'False',
      'SealedKubeconfigInvalid',
    ]);
    expect(condition(unpublished, 'KubeconfigPublished')).to.include(
      'sealed for another VirtualCluster than UID',
    );
    const text = JSON.stringify(unpublished);
    expect(text).to.not.include(MARKER);
    expect(text).to.not.include(replayed.slice(0, 40));
    expect(unpublished.children).to.deep.equal([]);
  });

  it('refuses a fed-back kubeconfig off the allowlist, as a local one', () => {
    const sealed = sealedKubeconfig(
      VC_UID,
      withFields('user', ['exec:', `  command: /tmp/${MARKER}`]),
    );
    const response = sync(remoteResolved(), [readyWork(sealed)]);
    expect(conditions(response).KubeconfigPublished).to.deep.equal([
      'False',
      'K3kKubeconfigRejected',
    ]);
    expect(JSON.stringify(response)).to.not.include(MARKER);
  });

  it('is Degraded when the Cell is not live, the work notwithstanding', () => {
    const stale = remoteCell();
    stale.status!.managedCluster!.leaseFresh = false;
    const response = syncVirtualCluster(
      syncRequest(remoteResolved(), [stale, smallClass(), hostNamespace(), readyWork()]),
      remoteConfig(),
      NOW,
    );
    expect(statusOf(response).phase).to.equal('Degraded');
    expect(conditions(response).CellLive).to.deep.equal(['False', 'LeaseStale']);
  });

  it('snapshot: the only child rendered on the hub is the kubeconfig Secret', () => {
    const response = sync(remoteResolved(), [readyWork()]);
    expect(response.children.map((child) => child.kind)).to.deep.equal(['Secret']);
    matchSnapshot('team-a-remote', objectsYaml(response.children));
  });
});

describe('VirtualCluster on a ManifestWork Cell: deletion', () => {
  function deleting(annotations: Record<string, string> = {}): VirtualCluster {
    const vc = remoteResolved();
    vc.metadata.deletionTimestamp = '2026-11-30T02:00:00Z';
    vc.metadata.annotations = annotations;
    return vc;
  }
  const finalize = (
    vc: VirtualCluster,
    related: KubernetesObject[],
    children: KubernetesObject[],
  ) => finalizeVirtualCluster(syncRequest(vc, related, children, true), CONFIG, LATER);
  const secret = (): KubernetesObject =>
    asObserved({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET, namespace: 'tenant-a' },
    });

  it('waits until the ManifestWork is gone, listing it in status.cleanup', () => {
    const waiting = finalize(deleting(), [manifestWork()], [secret()]);
    expect(waiting.finalized).to.equal(false);
    expect(waiting.children).to.deep.equal([]);
    expect(statusOf(waiting).cleanup).to.deep.equal([
      { apiVersion: 'v1', kind: 'Secret', name: SECRET },
      { apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', name: WORK },
    ]);
    expect(condition(waiting, 'Ready')).to.include(
      `ManifestWork ${WORK} (namespace ${REMOTE_CLUSTER})`,
    );
    const workOnly = finalize(deleting(), [manifestWork()], []);
    expect(workOnly.finalized).to.equal(false);
    expect(statusOf(workOnly).cleanup).to.have.length(1);
    const unobserved = finalizeVirtualCluster(
      { ...syncRequest(deleting(), [], [], true), related: {} },
      CONFIG,
      LATER,
    );
    expect(unobserved.finalized).to.equal(false);
    expect(condition(unobserved, 'Ready')).to.include('not known to be gone');
    const elsewhere = finalize(deleting(), [manifestWork({ namespace: 'other-cluster' })], []);
    expect(elsewhere.finalized).to.equal(true);
    const gone = finalize(deleting(), [], []);
    expect(gone.finalized).to.equal(true);
    expect(statusOf(gone).cleanup).to.deep.equal([]);
  });

  it('lets go at once with kubecell.io/skip-cleanup=true, the work still listed', () => {
    const response = finalize(
      deleting({ 'kubecell.io/skip-cleanup': 'true' }),
      [manifestWork()],
      [],
    );
    expect(response.finalized).to.equal(true);
    expect(statusOf(response).cleanup).to.have.length(1);
  });
});

function condition(response: CompositeSyncResponse, type: string): string {
  return (
    (statusOf(response) as VirtualClusterStatus).conditions?.find((c) => c.type === type)
      ?.message ?? ''
  );
}

/** The local k3k Cluster whose status is what `k3k` feeds back. */
function localCluster(k3k: FedBackK3k): K3kCluster {
  const { ready } = k3k;
  return {
    apiVersion: 'k3k.io/v1beta1',
    kind: 'Cluster',
    metadata: { name: 'team-a', namespace: 'tenant-a' },
    status: {
      ...(k3k.phase === undefined ? {} : { phase: k3k.phase }),
      conditions: ready === undefined ? [] : [{ type: 'Ready', ...ready }],
    },
  };
}

/** The related objects of a remote sync, without the ManifestWork group (not observed). */
function withoutWorks(vc: VirtualCluster) {
  const related = { ...syncRequest(vc, remoteRelated()).related };
  delete related['ManifestWork.work.open-cluster-management.io/v1'];
  return related;
}

describe('VirtualCluster on a ManifestWork Cell: settings and HTTP', function () {
  this.timeout(30_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kubecell-vc-sealing-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function keyFile(): string {
    const file = path.join(dir, 'key.pem');
    writeFileSync(file, sealingKeys().privateKey.export({ type: 'pkcs8', format: 'pem' }));
    return file;
  }

  it('loads the sealing key from KUBECELL_SEALING_KEY_FILE, and refuses a file without one', () => {
    expect(loadVirtualClusterConfig({}).sealingKeys).to.equal(undefined);
    const loaded = loadVirtualClusterConfig({ KUBECELL_SEALING_KEY_FILE: keyFile() });
    expect(loaded.sealingKeys?.current.asymmetricKeyType).to.equal('rsa');
    expect(loaded.sealingKeys).to.not.have.property('previous');
    const bad = path.join(dir, 'not-a-key.pem');
    writeFileSync(bad, 'not a key');
    expect(() =>
      loadVirtualClusterConfig({
        KUBECELL_SEALING_KEY_FILE: bad,
        KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS: '0',
      }),
    )
      .to.throw(ConfigError)
      .with.property('problems')
      .that.satisfies(
        (problems: string[]) =>
          problems.some((p) => p.startsWith('KUBECELL_SEALING_KEY_FILE=')) &&
          problems.some((p) => p.includes('KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS')),
      );
  });

  it('through the validation layer: the ManifestWork and status.resolved.cell.delivery pass, the Secret is published', async () => {
    const { app } = await productApp(NOW, { KUBECELL_SEALING_KEY_FILE: keyFile() });
    const body = syncRequest(remoteResolved(), [...remoteRelated(), readyWork()]);
    const response = await request(app).post('/hooks/virtualcluster/sync').send(body).expect(200);
    const children = response.body.children as KubernetesObject[];
    expect(children.map((child) => `${child.kind}/${child.metadata.name}`)).to.deep.equal([
      `Secret/${SECRET}`,
    ]);
    expect(response.body.status.endpoint).to.deep.equal({ address: ADDRESS, port: 31234 });
  });
});
