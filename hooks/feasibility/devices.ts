/**
 * The check ResourceOffered: every extended resource the class's entitlement names is declared
 * as a device of the Cell's machine profile, one check per resource.
 */
import type { Cell, FeasibilityCheck, VirtualNodeClass } from '../generated/types/index.js';
import { check } from './check.js';
import { Reason } from './reasons.js';
import { extendedResources } from './resources.js';

export function checkResourceOffered(cell: Cell, cls: VirtualNodeClass): FeasibilityCheck[] {
  const names = extendedResources(cls.spec.entitlement?.workloadHard);
  const devices = cell.spec.machineProfile?.devices ?? [];
  const profile = cell.spec.machineProfile?.name ?? '';
  if (names.length === 0) {
    return [
      check(
        'ResourceOffered',
        'Pass',
        Reason.NoExtendedResources,
        'The entitlement names no extended resources.',
      ),
    ];
  }
  const declared = devices.map((device) => device.resourceName);
  return names.map((name) => {
    const device = devices.find((candidate) => candidate.resourceName === name);
    if (device !== undefined) {
      return check(
        'ResourceOffered',
        'Pass',
        Reason.DeviceDeclared,
        `Machine profile ${profile} declares ${name} (device ${device.name}).`,
        { resource: name },
      );
    }
    return check(
      'ResourceOffered',
      'Fail',
      Reason.DeviceNotDeclared,
      `Machine profile ${profile} does not declare ${name} (declared: ${declared.length === 0 ? 'none' : declared.join(', ')}); resource names must match character for character. Use a class whose extended resources the Cell declares, or another Cell.`,
      { resource: name },
    );
  });
}
