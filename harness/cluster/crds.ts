// Installing CustomResourceDefinitions into the local control plane and waiting until they are
// served.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { GpuCellPoolProvisioner } from './kubecell-stack.js';
import { poll } from '../poll.js';
import type { CommandResult } from './processes.js';
import { verifiedFiles, verifyUpstreamInputs } from './upstream-inputs.js';

export type Kubectl = (
  args: readonly string[],
  options?: { input?: string },
) => Promise<CommandResult>;

/**
 * The upstream CRD files pinned in upstream-inputs.json, from $KUBECELL_UPSTREAM_DIR/upstream-crds/
 * (default ../shared/upstream-crds/), sorted; checked by sha256 first, so only the pinned bytes
 * are ever installed (throws UpstreamInputsError, naming what is missing, otherwise).
 */
export function upstreamCrdFiles(): string[] {
  return verifiedFiles(verifyUpstreamInputs(), 'crd');
}

/** The shared upstream CRD files of OCM's API (ManagedCluster, ManifestWork). */
const OCM_SHARED_CRDS = /open-cluster-management\.io_/;

/**
 * The upstream CRD files a provisioner needs, by the API group their name starts with
 * (`<group>_<plural>.yaml`); the others are left out of its cluster. Cluster API Provider
 * KubeVirt's KubevirtMachineTemplate (group infrastructure.cluster.x-k8s.io) is Cluster API's,
 * though its file name says kubevirt; KubeVirt's own group is kubevirt.io (no file of it is
 * pinned: startKubeCellStack adds kubevirt-permissive-crd.yaml instead).
 */
const PROVISIONER_CRDS: Record<GpuCellPoolProvisioner, RegExp> = {
  kubevirt: /(^|\/)([\w-]+\.)*kubevirt\.io_[^/]+$/,
  'cluster-api': /(^|\/)([\w-]+\.)*cluster\.x-k8s\.io_[^/]+$/,
};

/** The upstream CRD files (patterns) a stack of `provisioners` leaves out. Pure. */
export function upstreamCrdsLeftOut(
  provisioners: readonly GpuCellPoolProvisioner[],
  realOcm: boolean,
): RegExp[] {
  return [
    ...(Object.keys(PROVISIONER_CRDS) as GpuCellPoolProvisioner[])
      .filter((provisioner) => !provisioners.includes(provisioner))
      .map((provisioner) => PROVISIONER_CRDS[provisioner]),
    // The real hub's own CRDs replace the shared ManagedCluster and ManifestWork CRDs.
    ...(realOcm ? [OCM_SHARED_CRDS] : []),
  ];
}

/**
 * k3k's pinned CRD files: what a managed cluster needs before OCM's work agent can apply the k3k
 * Cluster of a VirtualCluster's ManifestWork.
 */
export function k3kCrdFiles(): string[] {
  return upstreamCrdFiles().filter((file) => /k3k\.io_/.test(file));
}

/** metadata.name of every CustomResourceDefinition in a (multi-document) YAML file. */
export function crdNamesIn(file: string): string[] {
  const names: string[] = [];
  for (const document of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const object = document.toJS() as { kind?: unknown; metadata?: { name?: unknown } } | null;
    if (object?.kind === 'CustomResourceDefinition' && typeof object.metadata?.name === 'string') {
      names.push(object.metadata.name);
    }
  }
  return names;
}

function describeFailure(what: string, result: CommandResult): Error {
  return new Error(
    `${what} failed (${result.code ?? result.signal}):\n${result.stderr}${result.stdout}`,
  );
}

/**
 * Applies the files and waits until every CRD in them is Established. Server-side apply,
 * because the larger upstream CRDs exceed the 256 KiB limit of the annotation that
 * client-side apply stores.
 */
export async function installCrds(
  kubectl: Kubectl,
  files: readonly string[],
  timeoutSeconds = 60,
): Promise<string[]> {
  const names = files.flatMap(crdNamesIn);
  if (names.length === 0)
    throw new Error(`no CustomResourceDefinition found in ${files.join(', ')}`);
  for (const file of files) {
    const applied = await kubectl([
      'apply',
      '--server-side',
      '--force-conflicts',
      '--field-manager=kubecell-tests',
      '-f',
      file,
    ]);
    if (applied.code !== 0) throw describeFailure(`kubectl apply -f ${file}`, applied);
  }
  // `kubectl wait --for=condition` fails at once, rather than waiting, while a CRD just created
  // has no status.conditions yet ("accessor error: <nil> is of the type <nil>"), so it is asked
  // again until it succeeds or the time is up.
  await poll(
    `CRDs ${names.join(', ')} Established`,
    async () => {
      const established = await kubectl([
        'wait',
        '--for=condition=Established',
        `--timeout=${timeoutSeconds}s`,
        ...names.map((name) => `customresourcedefinition/${name}`),
      ]);
      return established.code === 0
        ? { value: true }
        : { notYet: describeFailure('kubectl wait', established).message };
    },
    { timeoutMs: timeoutSeconds * 1000, intervalMs: 250 },
  );
  return names;
}
