// The VirtualCluster controller through the real Metacontroller: a platform has a Ready Cell (the
// test plays OCM, the kubelets, the provider baseline and k3k), a tenant applies a
// VirtualNodeClass and a VirtualCluster and checks with kubectl what KubeCell made of it: the
// k3k Cluster, the quota and its defaults, the API NodePort and the published kubeconfig; that
// the quota holds pods to the entitlement; that a hand edit of the quota is put back; that
// editing the Cell or the class afterwards changes no child; that deleting the VirtualCluster
// removes every child, or, with kubecell.io/skip-cleanup=true, lets it go while a child k3k
// cannot clean up stays. The same apply → Ready → delete runs again under Metacontroller's
// default apply strategy (dynamic-apply), on a KubeCell of its own.
import { expect } from 'chai';
import { kubeconfigServers } from '../../../hooks/virtualcluster/kubeconfig.js';
import { expectPublishedKubeconfig } from '../../../hooks/virtualcluster/testing.js';
import { startKubeCellStack, type KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import {
  CELL,
  CELL_NAMESPACE,
  childRefs,
  createHostNamespace,
  eventuallyHookCalls,
  firstSeenReady,
  GPU,
  GPU_CLASS_QUOTA,
  hookCallsFor,
  K3K_CLUSTER,
  kubeconfigText,
  readChildren,
  startReadyCell,
  VC,
  VNCLASS,
  type ReadyCell,
} from './cell-fixtures.js';
import { virtualClusterManifest, virtualNodeClassManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  conditionOf,
  describeStatus,
  eventuallyGone,
  eventuallyPhase,
  getObject,
  hookCalls,
  kubectl,
  listObjects,
  uniqueName,
  watching,
  type ObjectWithStatus,
} from './support.js';

/** k3k's finalizer on its Clusters (k3k removes it once it has torn the control plane down). */
const K3K_FINALIZER = 'cluster.k3k.io/finalizer';

function report(line: string): void {
  process.stderr.write(`      [timing] ${line}\n`);
}

interface ReadyOutcome {
  vc: ObjectWithStatus;
  appliedAt: Date;
  readyAt: Date;
  servedAt: Date;
}

/**
 * Applies the VirtualCluster as a tenant would and waits for Ready; reports apply → Ready and
 * k3k's Ready signal (the simulated k3k wrote the Cluster's Ready status and its kubeconfig
 * Secret) → Ready. Reported, not asserted: the figures depend on the machine.
 */
async function applyAndWaitReady(
  label: string,
  stack: KubeCellStack,
  cell: ReadyCell,
  namespace: string,
  name: string,
  klass: string,
): Promise<ReadyOutcome> {
  const appliedAt = new Date();
  await apply(stack, virtualClusterManifest(namespace, name, { cell: cell.name, klass: klass }));
  const readyAt = await firstSeenReady(cell.simulation, namespace, name, 120_000);
  const vc = await eventuallyPhase(stack, VC, name, namespace, 'Ready');
  const served = cell.simulation.k3k?.served.get(`${namespace}/${name}`);
  expect(served, 'k3k served the Cluster').to.not.equal(undefined);
  const servedAt = served!.servedAt;
  report(
    `${label} ${namespace}/${name}: apply → Ready ${readyAt.getTime() - appliedAt.getTime()} ms; ` +
      `k3k Ready (Cluster status + kubeconfig written) → Ready ${readyAt.getTime() - servedAt.getTime()} ms`,
  );
  return { vc, appliedAt, readyAt, servedAt };
}

/** The InternalIPs of the Cell's profile Nodes. */
async function profileAddresses(stack: KubeCellStack, profile: string): Promise<string[]> {
  const nodes = await listObjects(stack, 'nodes', {
    selector: `kubecell.io/machine-profile=${profile}`,
  });
  return nodes.flatMap((node) =>
    ((node.status?.['addresses'] ?? []) as { type: string; address: string }[])
      .filter((address) => address.type === 'InternalIP')
      .map((address) => address.address),
  );
}

/** Deletes the VirtualCluster and waits until it and every child (and k3k's Secret) are gone. */
async function deleteAndExpectEverythingGone(
  stack: KubeCellStack,
  namespace: string,
  name: string,
  uid: string,
): Promise<void> {
  const deletedAt = Date.now();
  await kubectl(stack, ['delete', VC, name, '-n', namespace, '--wait=false']);
  await eventuallyGone(stack, VC, name, namespace);
  const goneAt = Date.now();
  await poll(
    `every child of ${namespace}/${name} gone`,
    async () => {
      const children = await readChildren(stack, namespace, name, uid);
      const left = children
        .filter((child) => child !== undefined)
        .map((child) => `${child.kind} ${child.metadata.name}`);
      return left.length === 0 ? { value: true } : { notYet: left.join(', ') };
    },
    watching(stack),
  );
  // What k3k made for the Cluster goes with it (owned by the Cluster: the garbage collector).
  // On a fresh control plane this waits for the garbage collector's first rediscovery (every
  // 30 s) of the CRDs installed after kube-controller-manager started.
  await eventuallyGone(stack, 'secret', `k3k-${name}-kubeconfig`, namespace);
  report(
    `${namespace}/${name}: delete → VirtualCluster gone ${goneAt - deletedAt} ms, → children and k3k's Secret gone ${Date.now() - deletedAt} ms`,
  );
}

/** The apply → Ready → delete scenario both apply strategies run. */
function applyReadyDelete(
  label: string,
  context: () => { stack: KubeCellStack; cell: ReadyCell },
): void {
  it('apply → Ready with every child, the NodePort endpoint and the kubeconfig; delete → every child gone', async function () {
    this.timeout(240_000);
    const { stack, cell } = context();
    const namespace = uniqueName('e2e-vc-ard');
    const klass = uniqueName('e2e-ard-class');
    await createHostNamespace(stack, namespace);
    await apply(stack, virtualNodeClassManifest(klass, GPU_CLASS_QUOTA), 'e2e-platform');
    const { vc } = await applyAndWaitReady(label, stack, cell, namespace, 'team', klass);
    const endpoint = vc.status?.['endpoint'] as { address: string; port: number };
    const service = await getObject(stack, 'service', 'kubecell-team-api', namespace);
    const nodePort = (service?.spec?.['ports'] as { nodePort?: number }[])[0]?.nodePort;
    expect(endpoint.port).to.equal(nodePort);
    expect(await profileAddresses(stack, cell.profile)).to.include(endpoint.address);
    const children = await readChildren(stack, namespace, 'team', vc.metadata.uid);
    expect(children.map((child) => child?.kind)).to.deep.equal([
      'Cluster',
      'ResourceQuota',
      'LimitRange',
      'Service',
      'Secret',
    ]);
    expect(kubeconfigServers(kubeconfigText(children[4]))).to.deep.equal([
      `https://${endpoint.address}:${endpoint.port}`,
    ]);
    await deleteAndExpectEverythingGone(stack, namespace, 'team', vc.metadata.uid);
    await kubectl(stack, ['delete', 'namespace', namespace, '--wait=false']);
    await kubectl(stack, ['delete', VNCLASS, klass, '--wait=false']);
  });
}

describe('e2e: VirtualCluster through Metacontroller', function () {
  this.timeout(120_000);
  let stack: KubeCellStack;
  let cell: ReadyCell;
  const namespace = uniqueName('e2e-vc');
  const name = 'team-a';
  const klass = uniqueName('e2e-small');
  let vc: ObjectWithStatus;
  let uid: string;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    cell = await startReadyCell(stack, uniqueName('e2e-vc-cell'));
    await createHostNamespace(stack, namespace);
  });

  after(async function () {
    this.timeout(240_000);
    if (!cell) return;
    await stack.cluster.kubectl(['delete', VC, '--all', '-n', namespace, '--wait=false']);
    await poll(
      `no VirtualCluster left in ${namespace}`,
      async () => {
        const left = await listObjects(stack, VC, { namespace });
        return left.length === 0 ? { value: true } : { notYet: `${left.length} left` };
      },
      watching(stack),
    );
    await cell.stop();
    await stack.cluster.kubectl(['delete', 'namespace', namespace, '--wait=false']);
    await stack.cluster.kubectl(['delete', VNCLASS, klass, '--wait=false']);
  });

  applyReadyDelete('server-side-apply', () => ({ stack, cell }));

  it('a class and a VirtualCluster applied by a tenant become Ready with all five children', async function () {
    this.timeout(180_000);
    await apply(stack, virtualNodeClassManifest(klass, GPU_CLASS_QUOTA), 'e2e-platform');
    const outcome = await applyAndWaitReady(
      'server-side-apply',
      stack,
      cell,
      namespace,
      name,
      klass,
    );
    vc = outcome.vc;
    uid = vc.metadata.uid;
    // The mutating webhook labelled it from its refs.
    expect(vc.metadata.labels).to.include({
      'kubecell.io/cell': cell.name,
      'kubecell.io/class': klass,
    });
    // ... and put Metacontroller's finalizer on at creation (D47), so Metacontroller wrote only
    // the status: no update of the object itself in its managed fields.
    expect(vc.metadata.finalizers).to.deep.equal([
      'metacontroller.io/compositecontroller-kubecell-virtualcluster',
    ]);
    const stored = await stack.cluster.kubectl([
      'get',
      VC,
      name,
      '-n',
      namespace,
      '-o',
      'jsonpath={.metadata.managedFields}',
      '--show-managed-fields',
    ]);
    const managed = JSON.parse(stored.stdout) as Array<{
      manager?: string;
      operation?: string;
      subresource?: string;
    }>;
    expect(managed.some((m) => m.manager?.startsWith('metacontroller') === true)).to.equal(true);
    expect(
      managed.filter(
        (m) => m.manager?.startsWith('metacontroller') === true && m.subresource !== 'status',
      ),
      JSON.stringify(
        managed.map(({ manager, operation, subresource }) => ({ manager, operation, subresource })),
      ),
    ).to.deep.equal([]);
    for (const type of [
      'Feasible',
      'Resolved',
      'ChildrenApplied',
      'K3kReady',
      'KubeconfigPublished',
      'CellLive',
      'Ready',
    ]) {
      expect(conditionOf(vc, type)?.status, `${type}: ${describeStatus(vc)}`).to.equal('True');
    }
    const resolved = vc.status?.['resolved'] as {
      cell: { name: string; uid: string; machineProfile: { name: string } };
      class: { name: string; entitlement: { workloadHard: Record<string, string> } };
      hostNamespace: string;
      endpointAddress: string;
    };
    const cellObject = await getObject(stack, CELL, cell.name, CELL_NAMESPACE);
    expect(resolved.cell).to.deep.include({ name: cell.name, uid: cellObject?.metadata.uid });
    expect(resolved.cell.machineProfile.name).to.equal(cell.profile);
    expect(resolved.class.name).to.equal(klass);
    expect(resolved.class.entitlement.workloadHard[`requests.${GPU}`]).to.equal('2');
    expect(resolved.hostNamespace).to.equal(namespace);
    expect(await profileAddresses(stack, cell.profile)).to.include(resolved.endpointAddress);

    const children = await readChildren(stack, namespace, name, uid);
    children.forEach((child, index) => {
      const [resource, childName] = childRefs(name, uid)[index]!;
      expect(child, `${resource} ${childName}`).to.not.equal(undefined);
      // Metacontroller owns it (controller reference to the VirtualCluster) and KubeCell labels it.
      expect(child!.metadata.ownerReferences).to.deep.include({
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualCluster',
        name,
        uid,
        controller: true,
        blockOwnerDeletion: true,
      });
      expect(child!.metadata.labels).to.include({
        'app.kubernetes.io/managed-by': 'kubecell',
        'kubecell.io/virtualcluster': name,
        'kubecell.io/cell': cell.name,
        'kubecell.io/class': klass,
        'controller-uid': uid,
      });
    });
    const [k3k] = children;
    expect(k3k!.spec).to.deep.include({
      mode: 'shared',
      servers: 1,
      nodeSelector: { 'kubecell.io/machine-profile': cell.profile },
      tlsSANs: [resolved.endpointAddress],
    });
    expect(k3k!.spec?.['persistence']).to.deep.include({
      type: 'dynamic',
      storageClassName: 'topolvm-provisioner',
    });
    // KubeCell never tried to write a second snapshot over the first (the CRD would refuse it,
    // and Metacontroller would report the refusal as a SyncError event on the VirtualCluster).
    const events = JSON.parse(
      await kubectl(stack, [
        'get',
        'events',
        '-n',
        namespace,
        '--field-selector',
        `involvedObject.kind=VirtualCluster,involvedObject.name=${name}`,
        '-o',
        'json',
      ]),
    ) as { items: { reason?: string; message?: string }[] };
    expect(
      events.items.filter((event) => event.message?.includes('immutable snapshot')),
    ).to.deep.equal([]);
  });

  it('status.endpoint is the resolved address and the NodePort the apiserver allocated', async function () {
    const service = await getObject(stack, 'service', `kubecell-${name}-api`, namespace);
    expect(service?.spec?.['type']).to.equal('NodePort');
    expect(service?.spec?.['selector']).to.deep.equal({ cluster: name, role: 'server' });
    const ports = service?.spec?.['ports'] as { name: string; port: number; nodePort?: number }[];
    expect(ports).to.have.length(1);
    expect(ports[0]).to.include({ name: 'https', port: 6443 });
    expect(ports[0]!.nodePort).to.be.within(30000, 32767);
    const current = await getObject(stack, VC, name, namespace);
    expect(current?.status?.['endpoint']).to.deep.equal({
      address: (current?.status?.['resolved'] as { endpointAddress: string }).endpointAddress,
      port: ports[0]!.nodePort,
    });
  });

  it("the published kubeconfig holds k3k's values, written by KubeCell, with the server at the endpoint", async function () {
    const current = await getObject(stack, VC, name, namespace);
    const secretName = `kubecell-${name}-${uid}-admin-kubeconfig`;
    expect(current?.status?.['credential']).to.deep.equal({ secretName });
    const { address, port } = current?.status?.['endpoint'] as { address: string; port: number };
    const k3kSecret = await getObject(stack, 'secret', `k3k-${name}-kubeconfig`, namespace);
    const original = kubeconfigText(k3kSecret);
    const server = /^ {4}server: (.+)$/m.exec(original)?.[1];
    expect(server, 'the kubeconfig k3k wrote has a server').to.be.a('string');
    const published = kubeconfigText(await getObject(stack, 'secret', secretName, namespace));
    expectPublishedKubeconfig(published, `https://${address}:${port}`, original);
  });

  it('the ResourceQuota holds pods to the entitlement; the LimitRange admits pods without requests', async function () {
    const quotaName = `kubecell-${name}-quota`;
    const quota = await getObject(stack, 'resourcequota', quotaName, namespace);
    // The entitlement plus the control-plane reserve on the keys it limits; no reserve on GPUs.
    expect(quota?.spec?.['hard']).to.deep.equal({
      'requests.cpu': '5',
      'requests.memory': '17Gi',
      [`requests.${GPU}`]: '2',
      pods: '52',
    });
    // Ready means the quota controller put it in force.
    expect((quota?.status?.['hard'] as Record<string, string>)[`requests.${GPU}`]).to.equal('2');
    await poll(
      `the default ServiceAccount of ${namespace}`,
      async () => {
        const account = await getObject(stack, 'serviceaccount', 'default', namespace);
        return account ? { value: true } : { notYet: 'absent' };
      },
      watching(stack),
    );
    const pod = (podName: string, resources?: Record<string, unknown>) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: podName, namespace },
        spec: {
          containers: [
            { name: 'main', image: 'registry.example/app:1', ...(resources ? { resources } : {}) },
          ],
        },
      });
    const tooMany = await stack.cluster.kubectl(['create', '-f', '-'], {
      input: pod('gpu-3', { limits: { [GPU]: '3' } }),
    });
    expect(tooMany.code, tooMany.stdout).to.not.equal(0);
    expect(tooMany.stderr).to.contain(`exceeded quota: ${quotaName}`);
    expect(tooMany.stderr).to.contain(`requested: requests.${GPU}=3`);
    expect(tooMany.stderr).to.contain(`limited: requests.${GPU}=2`);
    for (const [podName, resources] of [
      ['gpu-2', { limits: { [GPU]: '2' } }],
      ['no-requests', undefined],
    ] as const) {
      const admitted = await stack.cluster.kubectl(['create', '--dry-run=server', '-f', '-'], {
        input: pod(podName, resources),
      });
      expect(admitted.code, `${podName}: ${admitted.stderr}`).to.equal(0);
    }
  });

  it('a hand edit of the ResourceQuota is put back', async function () {
    const quotaName = `kubecell-${name}-quota`;
    const before = await getObject(stack, 'resourcequota', quotaName, namespace);
    await kubectl(stack, [
      'patch',
      'resourcequota',
      quotaName,
      '-n',
      namespace,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { hard: { [`requests.${GPU}`]: '10', pods: '500' } } }),
    ]);
    await poll(
      `${quotaName} put back`,
      async () => {
        const quota = await getObject(stack, 'resourcequota', quotaName, namespace);
        return JSON.stringify(quota?.spec) === JSON.stringify(before?.spec)
          ? { value: true }
          : { notYet: JSON.stringify(quota?.spec) };
      },
      watching(stack),
    );
  });

  it('editing the Cell and the class afterwards changes no child: status.resolved is what counts', async function () {
    this.timeout(180_000);
    const snapshot = (children: (ObjectWithStatus | undefined)[]) =>
      children.map((child) => ({
        kind: child?.kind,
        resourceVersion: child?.metadata.resourceVersion,
        spec: child?.spec,
        data: child?.data,
      }));
    const before = snapshot(await readChildren(stack, namespace, name, uid));
    const resolvedBefore = (await getObject(stack, VC, name, namespace))?.status?.['resolved'];
    const syncsBefore = (await hookCalls(stack)).ok.get('virtualcluster/sync') ?? 0;

    // The platform doubles the class's GPUs, moves its storage and adds a device to the Cell.
    await apply(
      stack,
      virtualNodeClassManifest(
        klass,
        {
          'requests.cpu': '8',
          'requests.memory': '32Gi',
          [`requests.${GPU}`]: '4',
          pods: '100',
          'limits.cpu': '16',
        },
        'other-storage',
      ),
      'e2e-platform',
    );
    await kubectl(stack, [
      'patch',
      CELL,
      cell.name,
      '-n',
      CELL_NAMESPACE,
      '--type=json',
      '-p',
      JSON.stringify([
        {
          op: 'add',
          path: '/spec/machineProfile/devices/-',
          value: { name: 'gpu-memory', resourceName: 'nvidia.com/gpumem' },
        },
      ]),
    ]);
    // Proof that Metacontroller synced the VirtualCluster with the edited Cell and class: once
    // the Cell controller has observed the edit (status.observedGeneration), the tenant touches
    // the VirtualCluster and the hook server answers a sync of it after that. (A lease renewal
    // is no proof any more: the Cell reads OCM's judgement of the lease, so a renewal changes
    // nothing a VirtualCluster sees.)
    await poll(
      `Cell ${cell.name} to observe the edit`,
      async () => {
        const current = await getObject(stack, CELL, cell.name, CELL_NAMESPACE);
        const generation = (current?.metadata as { generation?: number } | undefined)?.generation;
        const observed = current?.status?.['observedGeneration'];
        return generation !== undefined && observed === generation
          ? { value: true }
          : { notYet: `observedGeneration ${String(observed)} of ${String(generation)}` };
      },
      watching(stack),
    );
    const parent = { name, namespace };
    const callsBefore = hookCallsFor(stack, 'virtualcluster', 'sync', parent);
    await kubectl(stack, [
      'annotate',
      VC,
      name,
      '-n',
      namespace,
      '--overwrite',
      `e2e.kubecell.io/touched=${Date.now()}`,
    ]);
    await eventuallyHookCalls(stack, 'virtualcluster', 'sync', parent, callsBefore + 1);
    const syncsAfter = (await hookCalls(stack)).ok.get('virtualcluster/sync') ?? 0;
    expect(syncsAfter).to.be.greaterThan(syncsBefore);

    const after = snapshot(await readChildren(stack, namespace, name, uid));
    expect(after).to.deep.equal(before);
    const current = await getObject(stack, VC, name, namespace);
    expect(current?.status?.['resolved']).to.deep.equal(resolvedBefore);
    expect(current?.status?.phase, describeStatus(current)).to.equal('Ready');
    // The class itself took the edit.
    const edited = await getObject(stack, VNCLASS, klass);
    expect(edited?.spec?.['storageClassName']).to.equal('other-storage');
  });

  it('nobody can rewrite status.resolved: the CRD refuses a moved endpoint', async function () {
    // A dry run: were it accepted, nothing would be written either.
    const current = await getObject(stack, VC, name, namespace);
    const resolved = current?.status?.['resolved'] as Record<string, unknown>;
    const refused = await stack.cluster.kubectl([
      'patch',
      VC,
      name,
      '-n',
      namespace,
      '--subresource=status',
      '--dry-run=server',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { resolved: { ...resolved, endpointAddress: '192.0.2.1' } } }),
    ]);
    expect(refused.code, refused.stdout).to.not.equal(0);
    expect(refused.stderr).to.contain('status.resolved is an immutable snapshot');
  });

  it('deleting the VirtualCluster removes every child', async function () {
    await deleteAndExpectEverythingGone(stack, namespace, name, uid);
  });

  it('kubecell.io/skip-cleanup=true lets a VirtualCluster go while k3k cannot clean up; the other children still go', async function () {
    this.timeout(240_000);
    const ns = uniqueName('e2e-vc-skip');
    const vcName = 'team-s';
    await createHostNamespace(stack, ns);
    try {
      const { vc: ready } = await applyAndWaitReady(
        'server-side-apply',
        stack,
        cell,
        ns,
        vcName,
        klass,
      );
      const vcUid = ready.metadata.uid;
      // k3k puts its finalizer on the Cluster; then k3k stops running, so it never lifts it.
      await kubectl(stack, [
        'patch',
        K3K_CLUSTER,
        vcName,
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ metadata: { finalizers: [K3K_FINALIZER] } }),
      ]);
      await kubectl(stack, ['delete', VC, vcName, '-n', ns, '--wait=false']);
      // The cleanup cannot converge: the VirtualCluster waits, naming the Cluster.
      const stuck = await poll<ObjectWithStatus>(
        `${ns}/${vcName} waiting for the k3k Cluster`,
        async () => {
          const current = await getObject(stack, VC, vcName, ns);
          const cleanup = current?.status?.['cleanup'] as
            { kind: string; name: string }[] | undefined;
          return current?.status?.phase === 'Deleting' &&
            JSON.stringify(cleanup) ===
              JSON.stringify([{ apiVersion: 'k3k.io/v1beta1', kind: 'Cluster', name: vcName }])
            ? { value: current! }
            : { notYet: `${describeStatus(current)}; cleanup ${JSON.stringify(cleanup)}` };
        },
        watching(stack),
      );
      expect(stuck.metadata.finalizers).to.include(
        'metacontroller.io/compositecontroller-kubecell-virtualcluster',
      );

      await kubectl(stack, ['annotate', VC, vcName, '-n', ns, 'kubecell.io/skip-cleanup=true']);
      await eventuallyGone(stack, VC, vcName, ns);
      // Every other child is gone; the k3k Cluster stays, being deleted, until k3k lets go.
      const children = await readChildren(stack, ns, vcName, vcUid);
      expect(
        children.filter((child) => child !== undefined).map((child) => child!.kind),
      ).to.deep.equal(['Cluster']);
      expect(children[0]!.metadata.deletionTimestamp).to.be.a('string');
      expect(children[0]!.metadata.finalizers).to.deep.equal([K3K_FINALIZER]);

      // k3k comes back and finishes: the Cluster and what k3k made for it go.
      await kubectl(stack, [
        'patch',
        K3K_CLUSTER,
        vcName,
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ metadata: { finalizers: null } }),
      ]);
      await eventuallyGone(stack, K3K_CLUSTER, vcName, ns);
      await eventuallyGone(stack, 'secret', `k3k-${vcName}-kubeconfig`, ns);
    } finally {
      await stack.cluster.kubectl(['delete', VC, '--all', '-n', ns, '--wait=false']);
      await stack.cluster.kubectl(['delete', 'namespace', ns, '--wait=false']);
    }
  });
});

// OCM's hub finds the Cell's lease stale (harness/simulate/ocm.ts plays its lease controller): the
// ManagedCluster turns Available=Unknown, the Cell Degraded, and every VirtualCluster on it
// Degraded within the lease threshold (5 × leaseDurationSeconds) + 60 s (issue 14), without a
// lease renewal ever syncing either of them. The agent comes back: both are Ready again.
describe('e2e: a VirtualCluster on a Cell whose lease goes stale', function () {
  this.timeout(240_000);
  const LEASE_DURATION_SECONDS = 2;
  let stack: KubeCellStack;
  let cell: ReadyCell | undefined;
  const namespace = uniqueName('e2e-vc-stale');
  const klass = uniqueName('e2e-stale-class');
  const name = 'team-l';

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    cell = await startReadyCell(stack, uniqueName('e2e-stale-cell'), {
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
    });
    await createHostNamespace(stack, namespace);
    await apply(stack, virtualNodeClassManifest(klass, GPU_CLASS_QUOTA), 'e2e-platform');
    await apply(stack, virtualClusterManifest(namespace, name, { cell: cell.name, klass: klass }));
    await eventuallyPhase(stack, VC, name, namespace, 'Ready', 120_000);
  });

  after(async function () {
    this.timeout(240_000);
    if (!cell) return;
    await stack.cluster.kubectl(['delete', VC, name, '-n', namespace, '--wait=false']);
    await eventuallyGone(stack, VC, name, namespace, 120_000);
    await cell.stop();
    await stack.cluster.kubectl(['delete', 'namespace', namespace, '--wait=false']);
    await stack.cluster.kubectl(['delete', VNCLASS, klass, '--wait=false']);
  });

  it('turns Degraded (CellLive LeaseStale) within the lease threshold + 60 s, and Ready again when the agent renews', async function () {
    const live = cell as ReadyCell;
    const agent = live.simulation.leases!;
    // The agent dies: its lease is left as it was last renewed.
    await agent.stop();
    const lastRenewal = agent.renewedAt.get(live.name)?.getTime() ?? Date.now();
    const degraded = await eventuallyPhase(stack, VC, name, namespace, 'Degraded', 120_000);
    const seconds = (Date.now() - lastRenewal) / 1000;
    const threshold = 5 * LEASE_DURATION_SECONDS;
    report(
      `${namespace}/${name}: Degraded ${seconds.toFixed(1)} s after the last lease renewal (threshold ${threshold} s)`,
    );
    expect(seconds, 'seconds from the last renewal to Degraded').to.be.at.most(threshold + 60);
    expect(conditionOf(degraded, 'CellLive')).to.include({ status: 'False', reason: 'LeaseStale' });
    const cellObject = await getObject(stack, CELL, live.name, CELL_NAMESPACE);
    expect(cellObject?.status?.phase, describeStatus(cellObject)).to.equal('Degraded');
    // The children stay: a Degraded VirtualCluster keeps its cluster.
    const children = await readChildren(stack, namespace, name, degraded.metadata.uid);
    expect(children.filter((child) => child === undefined)).to.deep.equal([]);

    // The agent comes back: it renews at once, and its status sync sets Available=True again.
    agent.start();
    const ready = await eventuallyPhase(stack, VC, name, namespace, 'Ready', 120_000);
    expect(conditionOf(ready, 'CellLive')).to.include({ status: 'True' });
  });
});

describe("e2e: VirtualCluster under Metacontroller's default apply (dynamic-apply)", function () {
  this.timeout(120_000);
  let stack: KubeCellStack | undefined;
  let cell: ReadyCell | undefined;
  let failed = false;

  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await startKubeCellStack({ applyStrategy: 'dynamic-apply' });
    cell = await startReadyCell(stack, uniqueName('e2e-dyn-cell'));
  });

  after(async function () {
    this.timeout(120_000);
    try {
      await cell?.simulation.stop();
    } finally {
      await stack?.stop({ keepLogs: failed });
    }
  });

  applyReadyDelete('dynamic-apply', () => ({ stack: stack!, cell: cell! }));
});
