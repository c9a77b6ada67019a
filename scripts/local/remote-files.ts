// The files `local-up --simulate --remote` writes into its state directory (`remote/`):
//
//   sealing-key.pem   the hub's private sealing key (RSA 3072, PKCS#8), new on every start; the
//                     hook server reads it through KUBECELL_SEALING_KEY_FILE, and the delivery
//                     controller ships its public half to cell-remote (hooks/remote/sealing.ts)
//   kubeconfig        cluster-admin kubeconfig of the managed cluster cell-remote
//   cell-remote.yaml  a ready-to-apply sample: a host Namespace, a Cell with spec.delivery
//                     ManifestWork bound to cell-remote, a VirtualNodeClass and a VirtualCluster
//                     placed on that Cell (remoteSample())
//   agent/            the ConfigMaps the cell agent mounts, projected into files
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { writeSealingKey } from '../../harness/cluster/certs.js';
import path from 'node:path';
import { stringify } from 'yaml';
import {
  cellManifest,
  hostNamespaceManifest,
  virtualClusterManifest,
  virtualNodeClassManifest,
} from '../../harness/manifests.js';
import { REMOTE_CLUSTER_NAME } from './options.js';

/** Names in the sample: what the summary and the README tell the user to look at. */
export const REMOTE_SAMPLE = {
  cell: 'cell-remote',
  namespace: 'tenant-remote',
  machineProfile: 'remote-cpu',
  virtualNodeClass: 'remote-cpu-small',
  virtualCluster: 'team-remote',
} as const;

export interface RemoteFiles {
  dir: string;
  sealingKeyFile: string;
  managedKubeconfig: string;
  sampleFile: string;
  agentDir: string;
}

export function remoteFiles(localDir: string): RemoteFiles {
  const dir = path.join(localDir, 'remote');
  return {
    dir,
    sealingKeyFile: path.join(dir, 'sealing-key.pem'),
    managedKubeconfig: path.join(dir, 'kubeconfig'),
    sampleFile: path.join(dir, `${REMOTE_CLUSTER_NAME}.yaml`),
    agentDir: path.join(dir, 'agent'),
  };
}

/** The sample's objects, in the order they apply (Namespace and class before their users). */
export function remoteSample(): object[] {
  return [
    hostNamespaceManifest(REMOTE_SAMPLE.namespace),
    cellManifest(REMOTE_SAMPLE.cell, {
      managedCluster: REMOTE_CLUSTER_NAME,
      profile: REMOTE_SAMPLE.machineProfile,
      delivery: 'ManifestWork',
    }),
    virtualNodeClassManifest(REMOTE_SAMPLE.virtualNodeClass, {
      'requests.cpu': '2',
      'requests.memory': '4Gi',
    }),
    virtualClusterManifest(REMOTE_SAMPLE.namespace, REMOTE_SAMPLE.virtualCluster, {
      cell: REMOTE_SAMPLE.cell,
      klass: REMOTE_SAMPLE.virtualNodeClass,
    }),
  ];
}

const SAMPLE_HEADER = `# Written by \`npm run local-up -- --simulate --remote\`: a Cell on the managed cluster
# ${REMOTE_CLUSTER_NAME} (spec.delivery: ManifestWork) and a VirtualCluster placed on it. Apply it to the hub:
#   kubectl apply -f <this file>
# The hub's KubeCell delivers the cell agent and the VirtualCluster's children to ${REMOTE_CLUSTER_NAME}
# as OCM ManifestWorks in the hub namespace ${REMOTE_CLUSTER_NAME}; watch them land there with the
# managed cluster's kubeconfig (remote/kubeconfig beside this file).
`;

export function sampleYaml(): string {
  return (
    SAMPLE_HEADER +
    remoteSample()
      .map((object) => `---\n${stringify(object)}`)
      .join('')
  );
}

/** Writes a new sealing key and the sample; returns the files. */
export function writeRemoteFiles(localDir: string): RemoteFiles {
  const files = remoteFiles(localDir);
  // A fresh directory: files of an earlier run (its key) are not reused.
  rmSync(files.dir, { recursive: true, force: true });
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  writeSealingKey(files.sealingKeyFile);
  writeFileSync(files.sampleFile, sampleYaml());
  return files;
}
