// Snapshot tests of the rendered children. Each snapshot is the YAML of children the sync hook
// returns for a fixed request, committed under __snapshots__/. Any difference fails; run with
// UPDATE_SNAPSHOTS=1 to rewrite the files after an intended change, and review the diff.
import { objectsYaml, snapshotsBeside } from '../../test/support/snapshots.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import type { SecretObject } from './objects.js';
import {
  NOW,
  World,
  at,
  capiTemplates,
  claimTemplate,
  clusterApiPool,
  consumerNamespace,
  joinSecret,
  kubeVirtPool,
} from './testing.js';

const matchSnapshot = snapshotsBeside(import.meta.url);
const yamlOf = objectsYaml;

/** The Secret with its user-data decoded, so that the snapshot shows what the cell boots with. */
function readable(secret: SecretObject): KubernetesObject {
  const data = Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([key, value]) => [
      key,
      `(base64 of) ${Buffer.from(value, 'base64').toString('utf8')}`,
    ]),
  );
  return { ...secret, data } as KubernetesObject;
}

describe('GPUCellPool children snapshots', () => {
  it('the KubeVirt VM of samples/35-gpucellpool-full.yaml (uefi, claim template, Multus)', () => {
    const world = new World(kubeVirtPool(), [joinSecret(), claimTemplate(), consumerNamespace()]);
    const response = world.sync(NOW);
    matchSnapshot(
      'kubevirt-virtualmachine',
      yamlOf(response.children.filter((child) => child.kind === 'VirtualMachine').slice(0, 1)),
    );
  });

  it('the rendered user-data Secret of cell a100-0', () => {
    const world = new World(kubeVirtPool(), [joinSecret(), claimTemplate(), consumerNamespace()]);
    const response = world.sync(NOW);
    const secret = response.children.find((child) => child.kind === 'Secret') as SecretObject;
    matchSnapshot('user-data-secret', yamlOf([readable(secret)]));
  });

  it('the Cluster API Machine of samples/36-gpucellpool-clusterapi.yaml and its clones', () => {
    const world = new World(clusterApiPool(), [...capiTemplates(), consumerNamespace()]);
    const first = world.sync(NOW);
    const machine = first.children.filter((child) => child.kind === 'Machine');
    const clones = first.children.filter((child) => child.kind !== 'Machine');
    matchSnapshot('clusterapi-machine', yamlOf([...machine, ...clones]));
  });

  it('an unhealthy cell retired and replaced: its cordoned Node, the VMs, the status', () => {
    const world = new World(kubeVirtPool(), [joinSecret(), claimTemplate(), consumerNamespace()]);
    world.sync(NOW);
    world.sync(at(5));
    world.join('a100-0');
    world.join('a100-1');
    world.sync(at(10));
    world.setNodeCondition('a100-1-0', 'Ready', 'False', at(100));
    const response = world.sync(at(400));
    const nodes = response.children.filter((child) => child.kind === 'Node');
    const vms = response.children
      .filter((child) => child.kind === 'VirtualMachine')
      .map(({ apiVersion, kind, metadata }) => ({ apiVersion, kind, metadata }));
    matchSnapshot('health-remediation', yamlOf([...nodes, ...vms, { status: response.status }]));
  });
});
