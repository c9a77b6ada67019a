/**
 * The check NodePorts: the VirtualCluster's API needs one NodePort, and the Cell's cluster must
 * have one free in its NodePort range.
 */
import type { Cell, FeasibilityCheck } from '../generated/types/index.js';
import { check } from './check.js';
import type { NodePortRange } from './evaluate.js';
import { Reason } from './reasons.js';

export function checkNodePorts(cell: Cell, range: Readonly<NodePortRange>): FeasibilityCheck {
  const nodePorts = cell.status?.nodePorts;
  if (nodePorts?.allocated === undefined) {
    return check(
      'NodePorts',
      'Unknown',
      Reason.NodePortsUnknown,
      "The Cell has not reported NodePort usage yet; the VirtualCluster's API needs one NodePort.",
      { required: '1' },
    );
  }
  if (nodePorts.fresh !== true) {
    return check(
      'NodePorts',
      'Unknown',
      Reason.NodePortsNotFresh,
      "The Cell's NodePort observation is not fresh; the VirtualCluster's API needs one NodePort.",
      { required: '1' },
    );
  }
  const size = range.last - range.first + 1;
  const free = Math.max(0, size - nodePorts.allocated);
  const rangeText = `${range.first}-${range.last}`;
  if (free >= 1) {
    return check(
      'NodePorts',
      'Pass',
      Reason.NodePortsAvailable,
      `${free} of ${size} NodePorts (${rangeText}) are free; the VirtualCluster's API needs one.`,
      { required: '1', available: String(free) },
    );
  }
  return check(
    'NodePorts',
    'Fail',
    Reason.NodePortRangeExhausted,
    `All ${size} NodePorts (${rangeText}) are allocated; the VirtualCluster's API needs one. Delete unused NodePort Services or widen --service-node-port-range (and KUBECELL_NODEPORT_RANGE).`,
    { required: '1', available: '0' },
  );
}
