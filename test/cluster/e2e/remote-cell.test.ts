// Remote Cells through the real OCM (issue 18): KubeCell and OCM's hub run on one control
// plane, a GPU cluster on another joins it as `cell-remote` with OCM's real registration and
// work agents, and everything KubeCell does there travels as ManifestWorks. A platform engineer
// applies a Cell with `delivery: ManifestWork`; a tenant applies a plan and a VirtualCluster on
// the hub. The scenarios check with kubectl on both clusters: the Cell turns Ready from the real
// agent's lease and the cell agent's report; the plan is judged on that inventory; selector
// plans weigh it with simulated hub Cells (issue 29: three Cells, one remote, each policy, a
// Cell too small or closed to the tenant left out with its reason, read from the placement
// index); the VirtualCluster's children appear on the managed cluster's apiserver and its status on the hub
// reaches Ready with the endpoint, and the tenant reads k3k's kubeconfig on the hub; the cell
// agent holds only what its passes call (its Roles, by name) and the apiserver refuses it the
// rest; stopping OCM's agents turns both Degraded; deleting the VirtualCluster removes its
// children there; the hub's components hold no credential or route to the managed cluster.
import { expect } from 'chai';
import { expectPublishedKubeconfig } from '../../../hooks/virtualcluster/testing.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ANNOTATIONS } from '../../../hooks/kube/labels.js';
import { AGENT_WORK_NAME, virtualClusterWorkName } from '../../../hooks/remote/contract.js';
import { kubeconfigServers } from '../../../harness/cluster/ocm.js';
import { repoRoot } from '../../../harness/cluster/paths.js';
import { runCommand, type ManagedProcess } from '../../../harness/cluster/processes.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from '../shared-cluster.js';
import {
  applyCell,
  CELL,
  CELL_NAMESPACE,
  cellWorld,
  createHostNamespace,
  deleteCellNow,
  ensureProviderBaseline,
  GPU,
  GPU_CLASS_QUOTA,
  GPU_DEVICES,
  K3K_CLUSTER,
  kubeconfigText,
  printedColumns,
  standUpCellWorld,
  startRenewing,
  VC,
} from './cell-fixtures.js';
import { KubeClient, type LeaseRenewer } from '../../../harness/simulate/index.js';
import { agentRbacOnManagedCluster } from './remote-agent-rbac.js';
import {
  applyRemoteCell,
  MANAGED_CLUSTER,
  managedView,
  MANIFESTWORK,
  runAgent,
  standUpRemoteWorld,
  stopRemoteWorld,
  type RemoteWorld,
} from './remote-fixtures.js';
import {
  cellManifest,
  virtualClusterManifest,
  virtualNodeClassManifest,
} from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  conditionOf,
  describeStatus,
  eventuallyConcluded,
  eventuallyGone,
  eventuallyPhase,
  getObject,
  kubectl,
  type ObjectWithStatus,
  watching,
} from './support.js';

/** Why the agent's pass that sealed a kubeconfig ran (its log line's `trigger`), for the record. */
function sealingPass(agent: ManagedProcess | undefined): string {
  const lines = agent ? readFileSync(agent.logFile, 'utf8').split('\n') : [];
  const passes = lines.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as {
        msg?: string;
        trigger?: string;
        sealed?: { updated?: number };
      };
      return entry.msg === 'cell agent pass' && (entry.sealed?.updated ?? 0) > 0 ? [entry] : [];
    } catch {
      return [];
    }
  });
  return passes.at(-1)?.trigger ?? 'not found';
}

/** The kubectl the harness built, beside the control plane's other binaries. */
const kubectlBinary = (world: RemoteWorld): string => world.stack.cluster.binaries.kubectl;

describe('e2e: a Cell on another cluster, through OCM ManifestWorks', function () {
  this.timeout(180_000);
  const cell = 'gpu-remote';
  const profile = 'a100-remote';
  const namespace = 'team-remote';
  const name = 'vc-remote';
  const klass = 'remote-small';
  let world: RemoteWorld;
  let uid: string;
  let alice: string;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    world = await standUpRemoteWorld(profile);
  });

  after(async function () {
    this.timeout(120_000);
    await stopRemoteWorld(world);
  });

  it('the hub components were given only the hub: no route or credential to the managed cluster', async function () {
    const managedServers = kubeconfigServers(world.managed.cluster.kubeconfigPath);
    expect(managedServers).to.have.length.greaterThan(0);
    for (const file of Object.values(world.stack.hubComponentKubeconfigs)) {
      const servers = kubeconfigServers(file);
      expect(servers).to.have.length.greaterThan(0);
      for (const server of managedServers) expect(servers).to.not.include(server);
    }
  });

  it('a Cell bound to cell-remote delivers the cell agent; it turns Ready from the real lease and the agent’s report', async function () {
    await applyRemoteCell(world, cell, profile);
    const work = await poll<ObjectWithStatus>(
      `ManifestWork ${AGENT_WORK_NAME}`,
      async () => {
        const found = await getObject(world.stack, MANIFESTWORK, AGENT_WORK_NAME, MANAGED_CLUSTER);
        return found ? { value: found } : { notYet: 'absent' };
      },
      watching(world.stack),
    );
    expect(work.metadata.ownerReferences?.[0]).to.include({
      kind: 'ManagedCluster',
      name: MANAGED_CLUSTER,
    });
    await runAgent(world);
    const ready = await eventuallyPhase(world.stack, CELL, cell, CELL_NAMESPACE, 'Ready', 120_000);
    const status = ready.status as Record<string, unknown>;
    expect((status['managedCluster'] as Record<string, unknown>)['leaseFresh']).to.equal(true);
    expect(status['nodeCount'], describeStatus(ready)).to.deep.equal({
      ready: 2,
      total: 2,
      omitted: 0,
    });
    // Every Node of the managed cluster, as the cell agent's report carries them (through the
    // real OCM work agent's feedback), with its storage.
    const nodes = status['nodes'] as {
      name: string;
      ready?: boolean;
      allocatable?: Record<string, string>;
    }[];
    expect(nodes.map((node) => node.ready)).to.deep.equal([true, true]);
    expect(nodes.map((node) => node.name)).to.deep.equal(
      [...nodes.map((node) => node.name)].sort(),
    );
    for (const node of nodes) expect(node.allocatable?.[GPU], node.name).to.equal('8');
    const storage = status['storageInventory'] as { perNode?: { node: string }[] };
    expect(storage.perNode?.map((entry) => entry.node)).to.deep.equal(
      nodes.map((node) => node.name),
    );
    expect(conditionOf(ready, 'NodeDetailTruncated')).to.include({
      status: 'False',
      reason: 'NodeDetailComplete',
    });
    const inventory = status['inventory'] as Record<string, { allocatable?: string }>;
    expect(inventory[GPU]?.allocatable, JSON.stringify(inventory)).to.equal('16');
    expect(conditionOf(ready, 'InventoryFresh')?.status).to.equal('True');
  });

  it('a plan on the remote Cell is judged on the agent’s inventory', async function () {
    await createHostNamespace(world.stack, namespace);
    await apply(world.stack, virtualNodeClassManifest(klass, GPU_CLASS_QUOTA), 'e2e-platform');
    await apply(world.stack, {
      apiVersion: 'kubecell.io/v1alpha1',
      kind: 'VirtualClusterPlan',
      metadata: { name: 'fits', namespace },
      spec: { cellRef: { name: cell }, classRef: { name: klass } },
    });
    const plan = await eventuallyConcluded(world.stack, 'fits', namespace);
    const status = plan.status as { decision: string; checks?: unknown };
    expect(status.decision, JSON.stringify(status.checks)).to.equal('Accepted');
  });

  it('a selector plan weighs the remote Cell with the hub’s: it is chosen, a Cell with no ManagedCluster is left out', async function () {
    // The remote Cell and a Cell bound to a ManagedCluster that does not exist, both labelled.
    const tier = 'remote-e2e';
    await kubectl(world.stack, [
      'label',
      CELL,
      cell,
      '-n',
      CELL_NAMESPACE,
      `example.com/tier=${tier}`,
    ]);
    const orphan = cellManifest('gpu-nowhere', {
      managedCluster: 'nowhere',
      profile,
      devices: GPU_DEVICES,
    });
    orphan.metadata.labels = { 'example.com/tier': tier };
    await apply(world.stack, orphan, 'e2e-platform');
    await apply(world.stack, {
      apiVersion: 'kubecell.io/v1alpha1',
      kind: 'VirtualClusterPlan',
      metadata: { name: 'any-remote', namespace },
      spec: {
        cellSelector: { matchLabels: { 'example.com/tier': tier } },
        classRef: { name: klass },
      },
    });
    const plan = await eventuallyConcluded(world.stack, 'any-remote', namespace);
    const status = plan.status as {
      decision: string;
      placement?: { candidates: number; chosen?: { name: string }; filtered: unknown[] };
    };
    expect(status.decision, JSON.stringify(status)).to.equal('Accepted');
    expect(status.placement?.candidates).to.equal(2);
    expect(status.placement?.chosen?.name).to.equal(cell);
    expect(status.placement?.filtered, JSON.stringify(status.placement)).to.have.length(1);
    expect(JSON.stringify(status.placement?.filtered)).to.include('gpu-nowhere');
    await kubectl(world.stack, [
      'delete',
      CELL,
      'gpu-nowhere',
      '-n',
      CELL_NAMESPACE,
      '--wait=false',
    ]);
  });

  it('three Cells, one of them remote: each policy chooses as documented; a Cell too small or closed to the tenant is left out with its reason', async function () {
    this.timeout(300_000);
    // Two hub Cells beside the remote one (16 GPUs, zone a): one of 8 GPUs in zone b, and one of
    // 16 in zone b whose namespaceSelector does not admit the tenant's namespace.
    const key = 'example.com/three-cells';
    const client = new KubeClient(world.stack.cluster.kubeconfigPath);
    const small = cellWorld('hub-small');
    const closed = cellWorld('hub-closed');
    const renewers: LeaseRenewer[] = [];
    const label = (cellName: string, ...labels: string[]) =>
      kubectl(world.stack, [
        'label',
        '--overwrite',
        CELL,
        cellName,
        '-n',
        CELL_NAMESPACE,
        ...labels,
      ]);
    try {
      await ensureProviderBaseline(client);
      for (const [hub, nodes, restricted] of [
        [small, 1, false],
        [closed, 2, true],
      ] as const) {
        await standUpCellWorld(client, hub, { nodes: { perProfile: nodes } });
        renewers.push(startRenewing(client, hub.managedCluster, 60, 20_000));
        await applyCell(world.stack, hub, {
          labels: { [key]: 'yes', 'example.com/zone': 'b' },
          closed: restricted,
        });
      }
      await label(cell, `${key}=yes`, 'example.com/zone=a');
      for (const hub of [small, closed]) {
        await eventuallyPhase(world.stack, CELL, hub.cell, CELL_NAMESPACE, 'Ready');
      }
      await apply(
        world.stack,
        virtualNodeClassManifest('remote-ten', { 'requests.cpu': '4', [`requests.${GPU}`]: '10' }),
        'e2e-platform',
      );
      const decide = async (plan: string, policy?: Record<string, string>, className = klass) => {
        await apply(world.stack, {
          apiVersion: 'kubecell.io/v1alpha1',
          kind: 'VirtualClusterPlan',
          metadata: { name: plan, namespace },
          spec: {
            cellSelector: { matchLabels: { [key]: 'yes' } },
            ...(policy ? { placementPolicy: policy } : {}),
            classRef: { name: className },
          },
        });
        const status = (await eventuallyConcluded(world.stack, plan, namespace)).status as {
          placement?: {
            candidates: number;
            chosen?: { name: string; score?: string; domain?: string };
            runnerUp?: { name: string; score?: string };
            filtered: { result: string; reason: string; cells: string[] }[];
          };
        };
        return status.placement;
      };
      const closedOut = { result: 'Fail', reason: 'NamespaceNotAllowed', cells: [closed.cell] };

      const most = await decide('three-most');
      expect(most?.candidates, JSON.stringify(most)).to.equal(3);
      expect(most?.chosen).to.deep.include({ name: cell, score: '7' });
      expect(most?.runnerUp).to.deep.include({ name: small.cell, score: '3' });
      expect(most?.filtered).to.deep.equal([{ ...closedOut, count: 1 }]);

      const pack = await decide('three-pack', { type: 'Pack' });
      expect(pack?.chosen, JSON.stringify(pack)).to.deep.include({ name: small.cell, score: '3' });

      const spread = await decide('three-spread', {
        type: 'Spread',
        spreadKey: 'example.com/zone',
      });
      expect(spread?.chosen, JSON.stringify(spread)).to.deep.include({ name: cell, domain: 'a' });

      const ten = await decide('three-ten', undefined, 'remote-ten');
      expect(ten?.chosen, JSON.stringify(ten)).to.deep.include({ name: cell, score: '0.6' });
      expect(ten?.filtered).to.deep.equal([
        { result: 'Fail', reason: 'InsufficientCapacity', count: 1, cells: [small.cell] },
        { ...closedOut, count: 1 },
      ]);
      const columns = await printedColumns(
        world.stack,
        'virtualclusterplans.kubecell.io',
        'three-ten',
        namespace,
      );
      expect(columns).to.include({ DECISION: 'Accepted', CHOSEN: cell, SCORE: '0.6' });
    } finally {
      for (const renewer of renewers) await renewer.stop();
      for (const hub of [small, closed]) await deleteCellNow(world.stack, hub.cell);
      await label(cell, `${key}-`, 'example.com/zone-');
      client.close();
    }
  });

  it('a VirtualCluster on it: children on the managed apiserver, Ready on the hub with the endpoint and k3k’s kubeconfig', async function () {
    // The tenant, bound to `edit` in her namespace as docs/tenants.md says, applies it herself.
    alice = await world.stack.cluster.kubeconfigFor({ userName: 'alice', groups: [] });
    await kubectl(world.stack, [
      'create',
      'rolebinding',
      'team-edit',
      '--clusterrole=edit',
      '--user=alice',
      '-n',
      namespace,
    ]);
    const appliedAt = Date.now();
    const created = await runCommand(
      kubectlBinary(world),
      ['--kubeconfig', alice, 'create', '-f', '-'],
      {
        input: JSON.stringify(
          virtualClusterManifest(namespace, name, { cell: cell, klass: klass }),
        ),
      },
    );
    expect(created.code, created.stderr).to.equal(0);
    const vc = await eventuallyPhase(world.stack, VC, name, namespace, 'Ready', 150_000);
    const served = world.simulation.k3k?.served.get(`${namespace}/${name}`)?.servedAt.getTime();
    const since = (at: number | undefined) => (at ? ((Date.now() - at) / 1000).toFixed(1) : '–');
    console.log(
      `      apply → Ready ${since(appliedAt)} s, k3k served → Ready ${since(served)} s (seen by a` +
        ` 0.3-s poll; work agent status sync 2 s); the pass that sealed it: ${sealingPass(world.agent.process)}`,
    );
    uid = vc.metadata.uid!;
    const remote = (resource: string, child: string) =>
      getObject(managedView(world), resource, child, namespace);
    expect(await remote(K3K_CLUSTER, name), 'k3k Cluster on the managed cluster').to.not.equal(
      undefined,
    );
    expect(await remote('resourcequota', `kubecell-${name}-quota`)).to.not.equal(undefined);
    expect(await remote('limitrange', `kubecell-${name}-defaults`)).to.not.equal(undefined);
    const service = await remote('service', `kubecell-${name}-api`);
    const nodePort = (service?.spec?.['ports'] as { nodePort: number }[])[0]!.nodePort;
    expect(
      await getObject(world.stack, K3K_CLUSTER, name, namespace),
      'no k3k Cluster on the hub',
    ).to.equal(undefined);
    const endpoint = vc.status?.['endpoint'] as { address: string; port: number };
    expect(endpoint.port).to.equal(nodePort);
    const secretName = `kubecell-${name}-${uid}-admin-kubeconfig`;
    const published = kubeconfigText(await getObject(world.stack, 'secret', secretName, namespace));
    const original = kubeconfigText(await remote('secret', `k3k-${name}-kubeconfig`));
    expectPublishedKubeconfig(published, `https://${endpoint.address}:${endpoint.port}`, original);
    const users = (parse(published) as { users: { user: Record<string, string> }[] }).users;
    expect(users[0]!.user['client-key-data'], 'a usable credential').to.be.a('string');
  });

  it('the tenant reads that kubeconfig on the hub with `kubecell kubeconfig`', async function () {
    const printed = await runCommand(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repoRoot, 'hooks', 'cli', 'kubecell.ts'),
        'kubeconfig',
        name,
        '-n',
        namespace,
      ],
      { cwd: repoRoot, env: { ...process.env, KUBECONFIG: alice }, timeoutMs: 60_000 },
    );
    expect(printed.code, printed.stderr).to.equal(0);
    const secretName = `kubecell-${name}-${uid}-admin-kubeconfig`;
    const published = kubeconfigText(await getObject(world.stack, 'secret', secretName, namespace));
    expect(printed.stdout).to.equal(published);
  });

  it('readers of the ManifestWork see only a sealed kubeconfig', async function () {
    const work = await getObject(
      world.stack,
      MANIFESTWORK,
      virtualClusterWorkName(uid),
      MANAGED_CLUSTER,
    );
    const text = JSON.stringify(work);
    const original = kubeconfigText(
      await getObject(managedView(world), 'secret', `k3k-${name}-kubeconfig`, namespace),
    );
    const key = /client-key-data: (.+)$/m.exec(original)?.[1];
    expect(key).to.be.a('string');
    expect(text).to.not.contain(key!);
    expect(text).to.contain('sealedKubeconfig');
  });

  it('the cell agent holds exactly what its passes call, by name; anything else on the managed apiserver is refused', async function () {
    // One writer at a time: the delivered agent pauses while the test's passes run as it.
    await world.agent.stop();
    const findings = await agentRbacOnManagedCluster(world, { namespace, name });
    await runAgent(world);
    expect(findings.passes.map((pass) => pass.errors)).to.deep.equal([[], []]);
    expect(findings.passes[1]).to.deep.include({
      reports: { [profile]: 'updated' },
      identity: 'updated',
      sealed: { [namespace]: 'updated' },
    });
    expect(findings.watches, 'the watches the agent keeps, opened as it').to.deep.equal({
      'host Namespaces': 'open',
      [`Secret ${namespace}/k3k-${name}-kubeconfig`]: 'open',
    });
    expect(findings.denied, 'calls the bound roles do not allow').to.deep.equal([]);
    expect(findings.unused, 'granted but never used').to.deep.equal([]);
    const clusterWide = findings.grants.filter((grant) => grant.namespace === undefined);
    expect(clusterWide.flatMap((grant) => grant.rule.resources)).to.not.include.members([
      'secrets',
      'configmaps',
    ]);
    for (const [call, status] of Object.entries(findings.outside)) {
      expect(status, call).to.equal(403);
    }
    await eventuallyPhase(world.stack, VC, name, namespace, 'Ready', 60_000);
  });

  it('stopping OCM’s agents turns the Cell and the VirtualCluster Degraded; restarting them, Ready', async function () {
    await world.managed.stopAgents();
    await eventuallyPhase(world.stack, CELL, cell, CELL_NAMESPACE, 'Degraded', 120_000);
    const degraded = await eventuallyPhase(world.stack, VC, name, namespace, 'Degraded', 150_000);
    expect(conditionOf(degraded, 'CellLive')?.status).to.not.equal('True');
    await world.managed.startAgents();
    await eventuallyPhase(world.stack, CELL, cell, CELL_NAMESPACE, 'Ready', 120_000);
    await eventuallyPhase(world.stack, VC, name, namespace, 'Ready', 150_000);
  });

  it('deleting the VirtualCluster removes its children from the managed cluster, then it is gone', async function () {
    await kubectl(world.stack, ['delete', VC, name, '-n', namespace, '--wait=false']);
    await eventuallyGone(world.stack, VC, name, namespace, 150_000);
    expect(
      await getObject(world.stack, MANIFESTWORK, virtualClusterWorkName(uid), MANAGED_CLUSTER),
    ).to.equal(undefined);
    for (const [resource, child] of [
      [K3K_CLUSTER, name],
      ['resourcequota', `kubecell-${name}-quota`],
      ['limitrange', `kubecell-${name}-defaults`],
      ['service', `kubecell-${name}-api`],
    ] as const) {
      const left: ObjectWithStatus | undefined = await getObject(
        managedView(world),
        resource,
        child,
        namespace,
      );
      expect(left, `${resource} ${child} on the managed cluster`).to.equal(undefined);
    }
  });

  it('kubecell.io/skip-cleanup=true lets a VirtualCluster go while its cluster cannot answer', async function () {
    this.timeout(300_000);
    const lost = 'vc-lost';
    await apply(world.stack, virtualClusterManifest(namespace, lost, { cell: cell, klass: klass }));
    const ready = await eventuallyPhase(world.stack, VC, lost, namespace, 'Ready', 150_000);
    const work = virtualClusterWorkName(ready.metadata.uid!);
    await world.managed.stopAgents();
    try {
      await kubectl(world.stack, ['delete', VC, lost, '-n', namespace, '--wait=false']);
      // Without the work agent nothing confirms the deletion: the VirtualCluster waits for it.
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      const waiting = await getObject(world.stack, VC, lost, namespace);
      expect(waiting?.status?.phase, describeStatus(waiting)).to.equal('Deleting');
      expect(JSON.stringify(waiting?.status?.['cleanup'])).to.contain(work);
      await kubectl(world.stack, [
        'annotate',
        VC,
        lost,
        '-n',
        namespace,
        `${ANNOTATIONS.skipCleanup}=true`,
      ]);
      await eventuallyGone(world.stack, VC, lost, namespace, 120_000);
      // What the cluster still holds stays there until its agent comes back.
      expect(await getObject(managedView(world), K3K_CLUSTER, lost, namespace)).to.not.equal(
        undefined,
      );
    } finally {
      await world.managed.startAgents();
    }
    await poll(
      `the work ${work} gone once the agent is back`,
      async () =>
        (await getObject(world.stack, MANIFESTWORK, work, MANAGED_CLUSTER)) === undefined
          ? { value: true }
          : { notYet: 'still there' },
      watching(world.stack, 120_000),
    );
    await poll(
      `k3k Cluster ${lost} removed from the managed cluster`,
      async () =>
        (await getObject(managedView(world), K3K_CLUSTER, lost, namespace)) === undefined
          ? { value: true }
          : { notYet: 'still there' },
      watching(managedView(world), 120_000),
    );
  });
});
