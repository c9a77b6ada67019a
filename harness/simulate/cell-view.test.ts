// Which Cells each simulation sees (cell-view.ts), and CellViewClient against two small HTTP
// apiservers (a "hub" and a "managed cluster"): the simulations of a remote world (local-up
// --simulate --remote among them) see the Cells they should, from where they should, and every
// other request goes to their own apiserver.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { API_VERSION } from '../../hooks/api/kinds.js';
import { KubeClient, resourcePath, type KubeObject } from './index.js';
import { CellViewClient, boundCluster, isCellListPath } from './cell-view.js';
import { REMOTE_CLUSTER as REMOTE_CLUSTER_NAME } from '../remote-world.js';

interface FakeApiserver {
  kubeconfig: string;
  /** Paths requested, in order (without the query). */
  requests: string[];
  close(): Promise<void>;
}

const CELLS = resourcePath({
  apiVersion: API_VERSION,
  resource: 'cells',
  namespace: 'kubecell-system',
});
const NODES = resourcePath({ apiVersion: 'v1', resource: 'nodes' });

function cell(name: string, cluster: string) {
  return {
    apiVersion: API_VERSION,
    kind: 'Cell',
    metadata: { name, namespace: 'kubecell-system' },
    spec: { managedClusterRef: { name: cluster } },
  };
}

/** Answers every GET with a list: `collections[path]`, or an empty list. */
async function fakeApiserver(
  dir: string,
  name: string,
  collections: Record<string, unknown[]>,
): Promise<FakeApiserver> {
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    const pathOnly = (request.url ?? '').split('?')[0] ?? '';
    requests.push(pathOnly);
    response.setHeader('Content-Type', 'application/json');
    response.end(JSON.stringify({ items: collections[pathOnly] ?? [], metadata: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = path.join(dir, `${name}.kubeconfig`);
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name, user: { token: 'test' } }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      'current-context': name,
    }),
  );
  return {
    kubeconfig,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const cellOf = (name: string, cluster?: string): KubeObject => ({
  apiVersion: API_VERSION,
  kind: 'Cell',
  metadata: { name, namespace: 'kubecell-system' },
  spec: cluster === undefined ? {} : { managedClusterRef: { name: cluster } },
});

describe('cell-view.ts: which Cells each simulation sees', function () {
  it("recognises the simulation's list of Cells, in one namespace or all, and nothing else", function () {
    const inNamespace = resourcePath({
      apiVersion: API_VERSION,
      resource: 'cells',
      namespace: 'kubecell-system',
    });
    expect(isCellListPath(inNamespace)).to.equal(true);
    expect(isCellListPath(resourcePath({ apiVersion: API_VERSION, resource: 'cells' }))).to.equal(
      true,
    );
    for (const other of [
      resourcePath({ apiVersion: API_VERSION, resource: 'virtualclusters', namespace: 'a' }),
      resourcePath({ apiVersion: API_VERSION, resource: 'cells', namespace: 'x', name: 'c' }),
      resourcePath({ apiVersion: 'v1', resource: 'nodes' }),
      '/apis/kubecellXio/v1alpha1/cells',
    ]) {
      expect(isCellListPath(other), other).to.equal(false);
    }
  });

  it('reads the ManagedCluster a Cell is bound to', function () {
    expect(boundCluster(cellOf('a', REMOTE_CLUSTER_NAME))).to.equal(REMOTE_CLUSTER_NAME);
    expect(boundCluster(cellOf('b', 'cell1'))).to.equal('cell1');
    expect(boundCluster(cellOf('c'))).to.equal(undefined);
  });
});

describe('cell-view.ts: CellViewClient over HTTP', function () {
  let dir: string;
  let hub: FakeApiserver;
  let managed: FakeApiserver;
  const clients: KubeClient[] = [];

  beforeEach(async function () {
    dir = mkdtempSync(path.join(tmpdir(), 'kubecell-cell-view-'));
    hub = await fakeApiserver(dir, 'hub', {
      [CELLS]: [cell('cell1', 'cell1'), cell('cell-remote', REMOTE_CLUSTER_NAME)],
      [NODES]: [{ metadata: { name: 'hub-node' } }],
    });
    managed = await fakeApiserver(dir, 'managed', {
      [NODES]: [{ metadata: { name: 'managed-node' } }],
    });
  });
  afterEach(async function () {
    for (const client of clients.splice(0)) client.close();
    await Promise.all([hub.close(), managed.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("the hub's simulation sees every Cell but cell-remote's", async function () {
    const client = new CellViewClient(hub.kubeconfig, {
      keep: (object) => boundCluster(object) !== REMOTE_CLUSTER_NAME,
    });
    clients.push(client);
    const cells = await client.list(CELLS);
    expect(cells.map((object) => object.metadata.name)).to.deep.equal(['cell1']);
    const nodes = await client.list(NODES);
    expect(nodes.map((object) => object.metadata.name)).to.deep.equal(['hub-node']);
  });

  it("cell-remote's simulation reads the hub's Cells bound to it, and the rest from its own apiserver", async function () {
    const hubClient = new KubeClient(hub.kubeconfig);
    const client = new CellViewClient(managed.kubeconfig, {
      cellsFrom: hubClient,
      keep: (object) => boundCluster(object) === REMOTE_CLUSTER_NAME,
    });
    clients.push(hubClient, client);
    const cells = await client.list(CELLS);
    expect(cells.map((object) => object.metadata.name)).to.deep.equal(['cell-remote']);
    const nodes = await client.list(NODES);
    expect(nodes.map((object) => object.metadata.name)).to.deep.equal(['managed-node']);
    expect(hub.requests).to.deep.equal([CELLS]);
    expect(managed.requests).to.deep.equal([NODES]);
  });
});
