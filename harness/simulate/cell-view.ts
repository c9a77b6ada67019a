// Which Cells each simulation of `local-up --simulate --remote` acts on. harness/simulate/ reads
// the Cells of its own apiserver to know which ManagedClusters to join and which machine
// profiles' Nodes to register. With --remote there are two apiservers and one set of Cells:
//
//   - the hub's simulation must leave the Cells bound to cell-remote alone: the real OCM agents
//     renew that cluster's lease (a simulated renewal would hide a stopped agent), and their
//     Nodes belong on the managed cluster, not on the hub;
//   - the managed cluster's simulation plays the kubelets of exactly those Cells, which live on
//     the hub (the managed cluster has no KubeCell API).
//
// CellViewClient is a KubeClient whose list of Cells comes from a chosen apiserver, filtered;
// every other request goes to its own apiserver.
import { API_VERSION } from '../../hooks/api/kinds.js';
import { KubeClient, type KubeObject, type ListOptions } from './index.js';

const CELL_LIST_PATH = new RegExp(
  `^/apis/${API_VERSION.replace(/[.]/g, '\\.')}/(namespaces/[^/]+/)?cells$`,
);

/** Whether `path` is a collection of Cells (all namespaces or one). */
export function isCellListPath(path: string): boolean {
  return CELL_LIST_PATH.test(path);
}

/** The ManagedCluster a Cell is bound to (spec.managedClusterRef.name), if any. */
export function boundCluster(cell: KubeObject): string | undefined {
  const spec = (cell as { spec?: { managedClusterRef?: { name?: unknown } } }).spec;
  const name = spec?.managedClusterRef?.name;
  return typeof name === 'string' ? name : undefined;
}

export interface CellView {
  /** Where the Cells are read; default the client's own apiserver. */
  cellsFrom?: KubeClient;
  /** Which Cells the simulation sees. */
  keep(cell: KubeObject): boolean;
}

export class CellViewClient extends KubeClient {
  constructor(
    kubeconfigPath: string,
    private readonly view: CellView,
  ) {
    super(kubeconfigPath);
  }

  override async list<T extends KubeObject = KubeObject>(
    path: string,
    options: ListOptions = {},
  ): Promise<T[]> {
    if (!isCellListPath(path)) return super.list<T>(path, options);
    const cells = this.view.cellsFrom
      ? await this.view.cellsFrom.list<T>(path, options)
      : await super.list<T>(path, options);
    return cells.filter((cell) => this.view.keep(cell));
  }
}
