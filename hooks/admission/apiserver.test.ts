// End to end: the real kube-apiserver of the local control plane (test/cluster) calls the
// admission webhooks over TLS, with the webhook configurations of manifests/webhook pointed at
// an in-process server, and the webhook's lookups read that same apiserver: its watch cache
// (cached-lookup.ts) as the hook server's ServiceAccount with the shipped role
// (manifests/webhook/base/rbac.yaml), its live reads with the admin's credentials. The
// configurations are registered under names of their own and select only objects labelled with
// this run's id, so the shared cluster's other tests are unaffected.
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { ControlPlane } from '../../harness/cluster/control-plane.js';
import { installKubeCellApi, kubectlOk } from '../../harness/cluster/kubecell.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from '../../test/cluster/shared-cluster.js';
import { captureLogger } from '../server/testing.js';
import { createAdmissionApp } from './app.js';
import { startWatchCache, type WatchCache } from './cached-lookup.js';
import { createKubernetesLookup, type ClusterLookup } from './lookup.js';
import { REPO_ROOT, selfSignedCertificate, type Json } from './testing.js';
import { startWebhookServer, type WebhookServer } from './tls.js';

const RUN = randomBytes(3).toString('hex');
const RUN_LABEL = 'test.kubecell.io/webhook-run';
const HOST = `wh-host-${RUN}`;
const PLAIN = `wh-plain-${RUN}`;
const CELL = `wh-cell-${RUN}`;
const CONTROLLER_NAMESPACE = 'kubecell-system';
const HOOK_SERVER = { namespace: CONTROLLER_NAMESPACE, name: 'kubecell-hooks' };

/** Live reads made through `lookup`, counted. */
function counted(lookup: ClusterLookup): { lookup: ClusterLookup; reads: () => number } {
  let reads = 0;
  const count =
    <A extends unknown[], R>(read: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      reads += 1;
      return read(...args);
    };
  return {
    lookup: {
      namespaceLabels: count(lookup.namespaceLabels),
      listVirtualClusters: count(lookup.listVirtualClusters),
      getCell: count(lookup.getCell),
      getVirtualNodeClass: count(lookup.getVirtualNodeClass),
    },
    reads: () => reads,
  };
}

function manifest(kind: string, name: string, namespace: string | undefined, spec: Json): string {
  return stringify({
    apiVersion: 'kubecell.io/v1alpha1',
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels: { [RUN_LABEL]: RUN } },
    spec,
  });
}

const vcSpec = { cellRef: { name: CELL }, classRef: { name: 'small' } };
const cellSpec = {
  managedClusterRef: { name: CELL },
  machineProfile: { name: 'a100', devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }] },
};

describe('admission webhooks called by the real apiserver over TLS', function () {
  let cluster: ControlPlane;
  let server: WebhookServer | undefined;
  let cache: WatchCache | undefined;
  let live: ReturnType<typeof counted>;
  const logs = captureLogger();
  const configurations: string[] = [];

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);

    const cert = selfSignedCertificate('kubecell-webhook-e2e');
    // The live lookups authenticate with the admin kubeconfig's client certificate, through
    // client-node; the watch cache with the hook server's ServiceAccount token and its role.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(cluster.kubeconfigPath);
    live = counted(createKubernetesLookup(kubeConfig));
    await kubectlOk(cluster, [
      'apply',
      '--server-side',
      '--field-manager=kubecell-tests',
      '-f',
      join(REPO_ROOT, 'manifests', 'webhook', 'base', 'rbac.yaml'),
    ]);
    const serviceAccount = new KubeConfig();
    serviceAccount.loadFromFile(await cluster.kubeconfigForServiceAccount(HOOK_SERVER));
    cache = startWatchCache({
      kubeConfig: serviceAccount,
      logger: logs.logger,
      controllerNamespace: CONTROLLER_NAMESPACE,
    });
    server = await startWebhookServer({
      app: createAdmissionApp({
        lookup: live.lookup,
        cache: cache.lookup,
        logger: logs.logger,
        controllerNamespace: CONTROLLER_NAMESPACE,
      }),
      port: 0,
      host: '127.0.0.1',
      tls: { certFile: cert.certFile, keyFile: cert.keyFile },
      logger: logs.logger,
    });

    // The shipped configurations, pointed at this server and limited to this run's objects.
    const shipped = parseAllDocuments(
      readFileSync(join(REPO_ROOT, 'manifests', 'webhook', 'base', 'webhooks.yaml'), 'utf8'),
    ).map((d) => d.toJS() as { metadata: { name: string }; webhooks: Json[] });
    const documents = shipped.map((config) => {
      const name = `${config.metadata.name}-e2e-${RUN}`;
      configurations.push(
        `${config.metadata.name.includes('validating') ? 'validating' : 'mutating'}webhookconfiguration/${name}`,
      );
      return {
        ...config,
        metadata: { ...config.metadata, name },
        webhooks: config.webhooks.map((webhook) => {
          const service = (webhook.clientConfig as { service: { path: string } }).service;
          return {
            ...webhook,
            clientConfig: {
              url: `https://127.0.0.1:${server!.port}${service.path}`,
              caBundle: Buffer.from(cert.cert).toString('base64'),
            },
            objectSelector: { matchLabels: { [RUN_LABEL]: RUN } },
          };
        }),
      };
    });
    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      documents.map((d) => stringify(d)).join('---\n'),
    );
    await kubectlOk(cluster, ['create', 'namespace', HOST]);
    await kubectlOk(cluster, ['label', 'namespace', HOST, 'kubecell.io/host-namespace=true']);
    await kubectlOk(cluster, ['create', 'namespace', PLAIN]);

    // Registration reaches the apiserver's admission chain asynchronously: wait until it bites.
    const probe = manifest('VirtualClusterPlan', 'probe', PLAIN, vcSpec);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const result = await cluster.kubectl(['create', '--dry-run=server', '-f', '-'], {
        input: probe,
      });
      if (result.code !== 0 && result.stderr.includes('is not a KubeCell host namespace')) break;
      if (Date.now() > deadline) throw new Error(`the webhook never answered: ${result.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  });

  after(async function () {
    this.timeout(60_000);
    if (!cluster) return;
    for (const configuration of configurations) {
      await cluster.kubectl(['delete', configuration, '--ignore-not-found']);
    }
    await cluster.kubectl([
      'delete',
      'namespace',
      HOST,
      PLAIN,
      '--ignore-not-found',
      '--wait=false',
    ]);
    await cluster.kubectl([
      'delete',
      'cell',
      CELL,
      '-n',
      CONTROLLER_NAMESPACE,
      '--ignore-not-found',
    ]);
    cache?.stop();
    await server?.close();
  });

  const create = (yaml: string) => cluster.kubectl(['create', '-f', '-'], { input: yaml });

  it('labels a VirtualCluster from its refs on creation (mutating webhook)', async function () {
    this.timeout(30_000);
    await kubectlOk(
      cluster,
      ['create', '-f', '-'],
      manifest('Cell', CELL, CONTROLLER_NAMESPACE, cellSpec),
    );
    await kubectlOk(
      cluster,
      ['create', '-f', '-'],
      manifest('VirtualCluster', 'vc1', HOST, vcSpec),
    );
    const vc = JSON.parse(
      await kubectlOk(cluster, ['get', 'virtualcluster', 'vc1', '-n', HOST, '-o', 'json']),
    ) as { metadata: { labels: Record<string, string> } };
    expect(vc.metadata.labels).to.deep.equal({
      [RUN_LABEL]: RUN,
      'kubecell.io/cell': CELL,
      'kubecell.io/class': 'small',
    });
    const selected = await kubectlOk(cluster, [
      'get',
      'virtualclusters',
      '-A',
      '-l',
      `kubecell.io/cell=${CELL}`,
      '-o',
      'name',
    ]);
    expect(selected.trim()).to.equal('virtualcluster.kubecell.io/vc1');
  });

  it('refuses a VirtualCluster outside a host namespace, saying how to fix it', async function () {
    this.timeout(30_000);
    const result = await create(manifest('VirtualCluster', 'vc-plain', PLAIN, vcSpec));
    expect(result.code).to.not.equal(0);
    // kubectl prints a 422 from a webhook like the apiserver's own validation errors.
    expect(result.stderr).to.include(
      `The VirtualCluster "vc-plain" is invalid: metadata.namespace: Forbidden: namespace ` +
        `"${PLAIN}" is not a KubeCell host namespace`,
    );
    expect(result.stderr).to.include(
      `kubectl label namespace ${PLAIN} kubecell.io/host-namespace=true`,
    );
  });

  it('refuses a second VirtualCluster in a host namespace', async function () {
    this.timeout(30_000);
    const result = await create(manifest('VirtualCluster', 'vc2', HOST, vcSpec));
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.include(`namespace "${HOST}" already hosts VirtualCluster "vc1"`);
  });

  it('refuses a Cell outside the controller namespace', async function () {
    this.timeout(30_000);
    const result = await create(manifest('Cell', 'misplaced', HOST, cellSpec));
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.include(
      `metadata.namespace: Invalid value: "${HOST}": a Cell must be created in the KubeCell ` +
        `controller namespace "kubecell-system"`,
    );
  });

  it("freezes a Cell's refs once a VirtualCluster resolved it, found through the real API", async function () {
    this.timeout(30_000);
    const cell = JSON.parse(
      await kubectlOk(cluster, ['get', 'cell', CELL, '-n', CONTROLLER_NAMESPACE, '-o', 'json']),
    ) as { metadata: { uid: string } };
    const retarget = ['patch', 'cell', CELL, '-n', CONTROLLER_NAMESPACE, '--type=merge', '-p'];
    // Not resolved yet: the refs may still change (and change back).
    await kubectlOk(cluster, [
      ...retarget,
      JSON.stringify({ spec: { managedClusterRef: { name: 'elsewhere' } } }),
    ]);
    await kubectlOk(cluster, [
      ...retarget,
      JSON.stringify({ spec: { managedClusterRef: { name: CELL } } }),
    ]);

    const resolved = {
      cell: {
        name: CELL,
        uid: cell.metadata.uid,
        managedClusterName: CELL,
        machineProfile: cellSpec.machineProfile,
      },
      class: {
        name: 'small',
        uid: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        storageClassName: 'topolvm-provisioner',
        entitlement: { workloadHard: { 'requests.cpu': '4' } },
      },
      hostNamespace: HOST,
      endpointAddress: '10.0.12.7',
      resolvedAt: '2026-11-30T00:00:00Z',
    };
    await kubectlOk(cluster, [
      'patch',
      'virtualcluster',
      'vc1',
      '-n',
      HOST,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { phase: 'Provisioning', resolved } }),
    ]);

    const denied = await cluster.kubectl([
      ...retarget,
      JSON.stringify({ spec: { machineProfile: { name: 'h100' } } }),
    ]);
    expect(denied.code).to.not.equal(0);
    expect(denied.stderr).to.include(
      `spec.machineProfile.name: Invalid value: "h100": field is immutable while VirtualClusters ` +
        `are placed on this Cell (${HOST}/vc1)`,
    );
    // Other fields stay editable.
    await kubectlOk(cluster, [
      ...retarget,
      JSON.stringify({
        spec: {
          machineProfile: {
            name: 'a100',
            devices: [
              { name: 'gpu', resourceName: 'nvidia.com/gpu' },
              { name: 'mig', resourceName: 'nvidia.com/mig-1g.10gb' },
            ],
          },
        },
      }),
    ]);
  });

  it("admits from the watch cache, synced as the hook server's ServiceAccount, with no live read", async function () {
    this.timeout(30_000);
    const deadline = Date.now() + 20_000;
    const cached = cache as WatchCache;
    // Synced, and the Cell of the earlier tests seen: a plan then needs nothing the cache lacks.
    while (!(cached.synced() && (await cached.lookup.getCell(CONTROLLER_NAMESPACE, CELL)))) {
      if (Date.now() > deadline) {
        throw new Error(`the watch cache did not sync: ${JSON.stringify(logs.entries())}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const before = live.reads();
    await kubectlOk(
      cluster,
      ['create', '-f', '-'],
      manifest('VirtualClusterPlan', 'from-cache', HOST, vcSpec),
    );
    expect(live.reads() - before, 'live reads').to.equal(0);
    expect(
      logs.entries().filter((e) => e.msg === 'admission webhook cache watch failed'),
    ).to.deep.equal([]);
  });

  it('never sees unknown fields: the apiserver rejects (strict) or prunes them first', async function () {
    this.timeout(30_000);
    const typo = manifest('VirtualClusterPlan', 'typo', HOST, {
      ...vcSpec,
      cellref: { name: 'x' },
    });
    const strict = await create(typo);
    expect(strict.code).to.not.equal(0);
    expect(strict.stderr).to.include('unknown field "spec.cellref"');
    await kubectlOk(cluster, ['create', '--validate=false', '-f', '-'], typo);
    const stored = JSON.parse(
      await kubectlOk(cluster, ['get', 'virtualclusterplan', 'typo', '-n', HOST, '-o', 'json']),
    ) as { spec: Json };
    expect(stored.spec).to.deep.equal(vcSpec);
  });

  it('fails closed: with the webhook down, KubeCell objects are refused', async function () {
    this.timeout(30_000);
    // Down means gone: the apiserver's kept-alive connections are cut too, else close() waits for
    // them (a call arriving on one just before close kept it open past the timeout in CI).
    const closing = server?.close();
    server?.closeAllConnections();
    await closing;
    server = undefined;
    const result = await create(manifest('VirtualClusterPlan', 'while-down', HOST, vcSpec));
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.match(/failed calling webhook "(mutate|validate)\.kubecell\.io"/);
  });
});
