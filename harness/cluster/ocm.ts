// Real Open Cluster Management in the cluster tests: a hub and a managed cluster, each a local
// control plane, with OCM's registration and work components built from the pinned archive
// (binaries.ts). The pieces:
//
//   ocm-hub.ts      startOcmHub(hubControlPlane)  hub CRDs, `registration controller`, `work manager`
//   ocm-managed.ts  startOcmManagedCluster(hub)   a second control plane, `registration agent` and
//                                                 `work agent` joined as `cell-remote`
//   this module     startOcmTestbed()             both, on a fresh hub control plane;
//                   kubeconfigServers()           what a kubeconfig can reach (to prove the hub's
//                                                 components hold no route to the managed cluster)
//
// kubecell-stack.ts `ocmHub: 'real'` runs KubeCell on such a hub (its `ocm` field).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './control-plane.js';
import { startOcmHub, type OcmHub, type OcmHubOptions } from './ocm-hub.js';
import {
  startOcmManagedCluster,
  type OcmManagedCluster,
  type OcmManagedClusterOptions,
} from './ocm-managed.js';

export * from './ocm-hub.js';
export * from './ocm-managed.js';

export interface OcmTestbedOptions {
  /** Options of the hub's control plane (it always signs client certificates). */
  hubControlPlane?: Omit<ControlPlaneOptions, 'signClientCertificates'>;
  hub?: OcmHubOptions;
  managedCluster?: OcmManagedClusterOptions;
  log?: (line: string) => void;
}

export interface OcmTestbed {
  hubCluster: ControlPlane;
  hub: OcmHub;
  managedCluster: OcmManagedCluster;
  /** Stops the managed cluster, the hub controllers and the hub control plane. */
  stop(options?: { keepLogs?: boolean }): Promise<void>;
}

/** A hub control plane with OCM's hub and one joined managed cluster (default `cell-remote`). */
export async function startOcmTestbed(options: OcmTestbedOptions = {}): Promise<OcmTestbed> {
  const hubCluster = await startControlPlane({
    ...options.hubControlPlane,
    signClientCertificates: true,
    ...(options.log ? { log: options.log } : {}),
  });
  let hub: OcmHub | undefined;
  try {
    hub = await startOcmHub(hubCluster, {
      ...options.hub,
      ...(options.log ? { log: options.log } : {}),
    });
    const managedCluster = await startOcmManagedCluster(hub, options.managedCluster);
    const runningHub = hub;
    return {
      hubCluster,
      hub: runningHub,
      managedCluster,
      async stop(stopOptions = {}): Promise<void> {
        const keepLogs =
          (stopOptions.keepLogs ?? false) || runningHub.crashed() || managedCluster.crashed();
        await managedCluster.stop({ keepLogs });
        await runningHub.stop();
        await hubCluster.stop({ keepLogs });
      },
    };
  } catch (error) {
    await hub?.stop();
    await hubCluster.stop({ keepLogs: true });
    throw error;
  }
}

interface KubeconfigFile {
  clusters?: { name?: string; cluster?: { server?: string; 'proxy-url'?: string } }[];
}

/**
 * Every apiserver URL (and proxy URL) a kubeconfig names: what a component given only this
 * kubeconfig can reach. A test proves the hub's components cannot reach a managed cluster by
 * checking that its apiserver URL is not among them.
 */
export function kubeconfigServers(file: string): string[] {
  const kubeconfig = parse(readFileSync(file, 'utf8')) as KubeconfigFile | null;
  return (kubeconfig?.clusters ?? []).flatMap((entry) =>
    [entry.cluster?.server, entry.cluster?.['proxy-url']].filter(
      (url): url is string => typeof url === 'string' && url !== '',
    ),
  );
}
