/** The checks CellFound and ClassFound: the Cell and the class the placement names exist. */
import type { Cell, FeasibilityCheck, VirtualNodeClass } from '../generated/types/index.js';
import { check } from './check.js';
import { Reason } from './reasons.js';

export function checkCellFound(cell: Cell | undefined, cellName: string): FeasibilityCheck {
  if (cell !== undefined) {
    return check('CellFound', 'Pass', Reason.CellFound, `Cell ${cellName} exists.`);
  }
  return check(
    'CellFound',
    'Fail',
    Reason.CellNotFound,
    `Cell ${cellName} does not exist in the KubeCell namespace; create it or name an existing Cell in spec.cellRef.name.`,
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
    'Fail',
    Reason.ClassNotFound,
    `VirtualNodeClass ${className} does not exist; create it or name an existing class in spec.classRef.name.`,
  );
}
