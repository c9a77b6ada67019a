// Installing KubeCell's own API into the shared control plane: the upstream CRDs its children and
// related objects need, its generated CRDs, and the namespaces the samples live in.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { ControlPlane } from './control-plane.js';
import { installCrds, upstreamCrdFiles } from './crds.js';
import { harnessClusterDir, repoRoot } from './paths.js';

export const kubecellCrdDir = path.join(repoRoot, 'manifests', 'crds');

export function kubecellCrdFiles(): string[] {
  return readdirSync(kubecellCrdDir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => path.join(kubecellCrdDir, file));
}

const installed = new WeakMap<ControlPlane, Promise<void>>();

export interface InstallKubeCellApiOptions {
  /** Upstream CRD files to leave out (e.g. Cluster API's on a KubeVirt-only platform). */
  excludeUpstreamCrds?: readonly RegExp[];
  /** Further CRD files to install. */
  extraCrdFiles?: readonly string[];
}

/** Idempotent per cluster: every test file may call it; the first call's options win. */
export function installKubeCellApi(
  cluster: ControlPlane,
  options: InstallKubeCellApiOptions = {},
): Promise<void> {
  let done = installed.get(cluster);
  if (!done) {
    done = (async () => {
      const excluded = options.excludeUpstreamCrds ?? [];
      // Multus publishes no CRD file we have; its permissive stand-in (named as such) lets the
      // NetworkAttachmentDefinition sample be applied at all.
      await installCrds(cluster.kubectl, [
        ...upstreamCrdFiles().filter((file) => !excluded.some((pattern) => pattern.test(file))),
        ...kubecellCrdFiles(),
        path.join(harnessClusterDir, 'multus-permissive-crd.yaml'),
        ...(options.extraCrdFiles ?? []),
      ]);
      // The controller namespace, and the one the pool samples keep their VMs and Secrets in.
      for (const name of ['kubecell-system', 'kubecell-cells']) {
        const namespace = await cluster.kubectl(['create', 'namespace', name]);
        if (namespace.code !== 0 && !namespace.stderr.includes('AlreadyExists')) {
          throw new Error(`creating namespace ${name} failed: ${namespace.stderr}`);
        }
      }
      const hosts = await cluster.kubectl([
        'apply',
        '-f',
        path.join(repoRoot, 'samples', '00-host-namespace.yaml'),
      ]);
      if (hosts.code !== 0) throw new Error(`applying host namespaces failed: ${hosts.stderr}`);
    })();
    installed.set(cluster, done);
  }
  return done;
}

/** Runs kubectl and fails with its output when it does not succeed. */
export async function kubectlOk(
  cluster: ControlPlane,
  args: readonly string[],
  input?: string,
): Promise<string> {
  const result = await cluster.kubectl(args, input === undefined ? {} : { input });
  if (result.code !== 0) {
    throw new Error(
      `kubectl ${args.join(' ')} failed (${result.code}):\n${result.stderr}${result.stdout}`,
    );
  }
  return result.stdout;
}

/** An object as the apiserver serves it. */
export async function getObject<T>(
  cluster: ControlPlane,
  resource: string,
  name: string,
  namespace?: string,
): Promise<T> {
  const scope = namespace ? ['-n', namespace] : [];
  return JSON.parse(await kubectlOk(cluster, ['get', resource, name, ...scope, '-o', 'json'])) as T;
}

/** Writes `status` through the status subresource, as a controller does, and reads it back. */
export async function writeStatus<T>(
  cluster: ControlPlane,
  resource: string,
  name: string,
  namespace: string | undefined,
  status: unknown,
): Promise<T> {
  const scope = namespace ? ['-n', namespace] : [];
  await kubectlOk(cluster, [
    'patch',
    resource,
    name,
    ...scope,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status }),
  ]);
  return (await getObject<{ status: T }>(cluster, resource, name, namespace)).status;
}

/** Applies one object given as JSON (server-side, so the field manager is explicit). */
export async function applyObject(
  cluster: ControlPlane,
  object: unknown,
  fieldManager = 'kubecell-tests',
): Promise<void> {
  await kubectlOk(
    cluster,
    ['apply', '--server-side', '--force-conflicts', `--field-manager=${fieldManager}`, '-f', '-'],
    JSON.stringify(object),
  );
}
