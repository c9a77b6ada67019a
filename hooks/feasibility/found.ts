/**
 * The checks CellFound and ClassFound: the Cell and the class the placement names exist. A
 * missing one is Unknown, not Fail: the hook sees only what Metacontroller observed, so an
 * object created a second ago and one that will never exist look the same, and a plan or
 * VirtualCluster is evaluated again when it appears (decision D40).
 */
import type { Cell, FeasibilityCheck, VirtualNodeClass } from '../generated/types/index.js';
import { check } from './check.js';
import { Reason } from './reasons.js';

export function checkCellFound(cell: Cell | undefined, cellName: string): FeasibilityCheck {
  if (cell !== undefined) {
    return check('CellFound', 'Pass', Reason.CellFound, `Cell ${cellName} exists.`);
  }
  return check(
    'CellFound',
    'Unknown',
    Reason.CellNotFound,
    `Cell ${cellName} does not exist in the KubeCell namespace (or was not observed yet); create it or name an existing Cell in spec.cellRef.name. The placement is evaluated again when it appears.`,
  );
}

export function checkClassFound(
  virtualNodeClass: VirtualNodeClass | undefined,
  className: string,
): FeasibilityCheck {
  if (virtualNodeClass !== undefined) {
    return check('ClassFound', 'Pass', Reason.ClassFound, `VirtualNodeClass ${className} exists.`);
  }
  return check(
    'ClassFound',
    'Unknown',
    Reason.ClassNotFound,
    `VirtualNodeClass ${className} does not exist (or was not observed yet); create it or name an existing class in spec.classRef.name. The placement is evaluated again when it appears.`,
  );
}
