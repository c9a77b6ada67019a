/**
 * The names of what the Metacontroller benchmarks apply as a user would (one Cell, one
 * VirtualNodeClass, and VirtualClusters on them; the objects are harness/manifests.ts's), and
 * waiting for the Cell to be Ready. Each part passes its own names.
 */
import { resourcePath, type KubeClient, type KubeObject } from '../harness/simulate/index.js';
import { poll } from '../harness/poll.js';

export interface BenchWorldNames {
  cellNamespace: string;
  cell: string;
  profile: string;
  klass: string;
  entitlement: Record<string, string>;
  virtualCluster: string;
}

/** Waits until the Cell's phase is Ready; the last conditions seen go into the timeout error. */
export async function untilCellReady(
  client: KubeClient,
  names: BenchWorldNames,
  timeoutMs: number,
  intervalMs = 1000,
): Promise<void> {
  const cellPath = resourcePath({
    apiVersion: 'kubecell.io/v1alpha1',
    resource: 'cells',
    namespace: names.cellNamespace,
    name: names.cell,
  });
  await poll(
    `Cell ${names.cell} to be Ready`,
    async () => {
      const cell = (await client.find(cellPath)) as
        (KubeObject & { status?: { phase?: string; conditions?: unknown } }) | undefined;
      return cell?.status?.phase === 'Ready'
        ? { value: true }
        : { notYet: JSON.stringify(cell?.status?.conditions ?? null).slice(0, 600) };
    },
    { timeoutMs, intervalMs },
  );
}
