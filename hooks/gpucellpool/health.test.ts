// The health judgement of one cell and of the pool (health.ts), on its own: no sync.
import { expect } from 'chai';
import type { GPUCellPool } from '../generated/types/index.js';
import { formatTime } from '../status/conditions.js';
import { DEFAULT_UNHEALTHY_CONDITIONS } from './constants.js';
import {
  healthPolicy,
  judgeCell,
  machineStartedAt,
  maxUnhealthyCount,
  remediationGate,
  resyncSeconds,
  type CellObservation,
  type HealthPolicy,
} from './health.js';
import type { MachineObject, NodeObject, TimedCondition } from './objects.js';
import { NOW, at, clusterApiPool, kubeVirtPool } from './testing.js';

const POLICY: HealthPolicy = healthPolicy(kubeVirtPool());

function vm(status: MachineObject['status'] = {}, created = at(-3600)): MachineObject {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name: 'a100-0-0',
      namespace: 'kubecell-cells',
      creationTimestamp: formatTime(created),
    },
    status,
  };
}

function capiMachine(status: MachineObject['status'] = {}): MachineObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name: 'a100-capi-0-0',
      namespace: 'kubecell-cells',
      creationTimestamp: formatTime(at(-3600)),
    },
    status,
  };
}

function condition(type: string, status: string, since: Date | undefined): TimedCondition {
  return { type, status, ...(since ? { lastTransitionTime: formatTime(since) } : {}) };
}

function nodeWith(...conditions: TimedCondition[]): NodeObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: 'a100-0-0' }, status: { conditions } };
}

const READY = condition('Ready', 'True', at(-3600));
const runningVm = (since: Date) => vm({ conditions: [condition('Ready', 'True', since)] });

function observe(fields: Partial<CellObservation>): CellObservation {
  return { provisioner: 'KubeVirt', nodeLost: false, ...fields };
}

describe('GPUCellPool cell health (health.ts)', () => {
  describe('the policy', () => {
    it('applies the defaults of the schema when spec.health is absent', () => {
      expect(POLICY).to.deep.equal({
        unhealthyConditions: DEFAULT_UNHEALTHY_CONDITIONS,
        nodeStartupTimeoutSeconds: 600,
        maxUnhealthy: '40%',
        remediation: 'Replace',
      });
    });

    it('takes what spec.health sets, field by field', () => {
      const pool: GPUCellPool = kubeVirtPool({
        health: { remediation: 'None', releaseTimeoutSeconds: 60, maxUnhealthy: 2 },
      });
      expect(healthPolicy(pool)).to.include({
        remediation: 'None',
        releaseTimeoutSeconds: 60,
        maxUnhealthy: 2,
        nodeStartupTimeoutSeconds: 600,
      });
    });
  });

  describe('a cell with a Node', () => {
    it('is Healthy (NodeHealthy) when no unhealthy condition holds', () => {
      const verdict = judgeCell(
        observe({ machine: runningVm(at(-3600)), node: nodeWith(READY) }),
        POLICY,
        NOW,
      );
      expect(verdict).to.deep.equal({ health: 'Healthy', reason: 'NodeHealthy' });
    });

    it('is Unhealthy (UnhealthyNode) once Ready=False has held 300 s, since then, not before', () => {
      const node = nodeWith(condition('Ready', 'False', at(-100)));
      const early = judgeCell(observe({ machine: runningVm(at(-3600)), node }), POLICY, NOW);
      expect(early).to.deep.equal({ health: 'Healthy', reason: 'NodeHealthy', nextCheck: at(200) });
      const due = judgeCell(observe({ machine: runningVm(at(-3600)), node }), POLICY, at(200));
      expect(due.health).to.equal('Unhealthy');
      expect(due.reason).to.equal('UnhealthyNode');
      expect(due.since).to.deep.equal(at(200));
      expect(due.detail).to.equal(
        `Node a100-0-0 has Ready=False since ${formatTime(at(-100))} (unhealthy after 300s)`,
      );
    });

    it('counts Ready=Unknown the same, and a GPU condition of NVSentinel at once', () => {
      const unknown = nodeWith(condition('Ready', 'Unknown', at(-301)));
      expect(judgeCell(observe({ node: unknown, machine: vm() }), POLICY, NOW).reason).to.equal(
        'UnhealthyNode',
      );
      const xid = nodeWith(READY, condition('SysLogsXIDError', 'True', NOW));
      const verdict = judgeCell(observe({ node: xid, machine: vm() }), POLICY, NOW);
      expect(verdict).to.include({ health: 'Unhealthy', reason: 'UnhealthyNode' });
      expect(verdict.detail).to.include('SysLogsXIDError=True');
      const cleared = nodeWith(READY, condition('SysLogsXIDError', 'False', NOW));
      expect(judgeCell(observe({ node: cleared, machine: vm() }), POLICY, NOW).health).to.equal(
        'Healthy',
      );
    });

    it('of several unhealthy conditions, names the one that failed first', () => {
      const node = nodeWith(
        condition('Ready', 'False', at(-1000)),
        condition('GpuMemWatch', 'True', at(-900)),
      );
      const verdict = judgeCell(observe({ node, machine: vm() }), POLICY, NOW);
      expect(verdict.since).to.deep.equal(at(-900));
      expect(verdict.detail).to.include('GpuMemWatch=True');
    });

    it('asks to be judged again when the earliest pending condition falls due', () => {
      const node = nodeWith(
        condition('Ready', 'Unknown', at(-10)),
        condition('KernelDeadlock', 'True', at(-250)),
      );
      const verdict = judgeCell(observe({ node, machine: vm() }), POLICY, NOW);
      expect(verdict.nextCheck).to.deep.equal(at(50));
    });

    it('does not time a condition without lastTransitionTime, unless it counts at once', () => {
      const node = nodeWith(condition('Ready', 'False', undefined));
      expect(judgeCell(observe({ node, machine: vm() }), POLICY, NOW)).to.deep.equal({
        health: 'Healthy',
        reason: 'NodeHealthy',
      });
      const xid = nodeWith(READY, condition('SysLogsXIDError', 'True', undefined));
      const verdict = judgeCell(observe({ node: xid, machine: vm() }), POLICY, NOW);
      expect(verdict).to.include({
        health: 'Unhealthy',
        detail: 'Node a100-0-0 has SysLogsXIDError=True (unhealthy after 0s)',
      });
      expect(verdict.since).to.deep.equal(NOW);
    });

    it('ignores conditions the policy does not list, and null condition lists', () => {
      const node = nodeWith(READY, condition('NetworkUnavailable', 'True', at(-9999)));
      expect(judgeCell(observe({ node, machine: vm() }), POLICY, NOW).health).to.equal('Healthy');
      const nulled: NodeObject = { ...node, status: { conditions: null } };
      expect(judgeCell(observe({ node: nulled, machine: vm() }), POLICY, NOW).health).to.equal(
        'Healthy',
      );
    });
  });

  describe('a cell without a Node', () => {
    it('is Starting with no clock until its machine runs (a VM waiting for its GPU)', () => {
      const pending = vm({ printableStatus: 'ErrorUnschedulable' }, at(-99999));
      expect(judgeCell(observe({ machine: pending }), POLICY, NOW)).to.deep.equal({
        health: 'Healthy',
        reason: 'Starting',
      });
      expect(judgeCell(observe({}), POLICY, NOW)).to.deep.equal({
        health: 'Healthy',
        reason: 'Starting',
      });
    });

    it('times out nodeStartupTimeoutSeconds after the VM became Ready (the boot hang)', () => {
      const machine = runningVm(at(-500));
      expect(judgeCell(observe({ machine }), POLICY, NOW)).to.deep.equal({
        health: 'Healthy',
        reason: 'Starting',
        nextCheck: at(100),
      });
      const verdict = judgeCell(observe({ machine }), POLICY, at(100));
      expect(verdict).to.include({ health: 'Unhealthy', reason: 'NodeStartupTimeout' });
      expect(verdict.since).to.deep.equal(at(100));
      expect(verdict.detail).to.equal(
        `no Node joined within 600s of a100-0-0 running (since ${formatTime(at(-500))})`,
      );
    });

    it('does not time out with nodeStartupTimeoutSeconds 0', () => {
      const policy = { ...POLICY, nodeStartupTimeoutSeconds: 0 };
      expect(judgeCell(observe({ machine: runningVm(at(-99999)) }), policy, NOW).health).to.equal(
        'Healthy',
      );
    });

    it('is NodeDeleted when its Node had joined and is gone while the machine remains', () => {
      const verdict = judgeCell(
        observe({ machine: runningVm(at(-999)), nodeLost: true }),
        POLICY,
        NOW,
      );
      expect(verdict).to.include({ health: 'Unhealthy', reason: 'NodeDeleted' });
      expect(verdict.since).to.equal(undefined);
    });
  });

  describe('a failed machine', () => {
    it('KubeVirt: a VirtualMachine in CrashLoopBackOff, Node or not', () => {
      const machine = vm({ printableStatus: 'CrashLoopBackOff' });
      for (const node of [undefined, nodeWith(READY)]) {
        const verdict = judgeCell(observe({ machine, node }), POLICY, NOW);
        expect(verdict).to.include({ health: 'Unhealthy', reason: 'MachineFailed' });
        expect(verdict.detail).to.equal('VirtualMachine a100-0-0 is in CrashLoopBackOff');
      }
    });

    it('Cluster API: phase Failed, or a v1beta1 failureReason', () => {
      const capi = (status: MachineObject['status']) =>
        judgeCell(
          observe({ provisioner: 'ClusterAPI', machine: capiMachine(status) }),
          POLICY,
          NOW,
        );
      expect(capi({ phase: 'Failed' }).reason).to.equal('MachineFailed');
      const failed = capi({ deprecated: { v1beta1: { failureReason: 'CreateError' } } });
      expect(failed.detail).to.equal('Machine a100-capi-0-0 failed: CreateError');
      expect(capi({ phase: 'Provisioning', deprecated: { v1beta1: {} } }).reason).to.equal(
        'Starting',
      );
    });
  });

  describe('when a machine runs', () => {
    it('KubeVirt: Ready True since its transition; printableStatus Running alone: its creation', () => {
      expect(machineStartedAt(runningVm(at(-5)), 'KubeVirt')).to.deep.equal(at(-5));
      expect(
        machineStartedAt(vm({ conditions: [condition('Ready', 'False', at(-5))] }), 'KubeVirt'),
      ).to.equal(undefined);
      expect(
        machineStartedAt(vm({ printableStatus: 'Running' }, at(-70)), 'KubeVirt'),
      ).to.deep.equal(at(-70));
    });

    it('Cluster API: InfrastructureReady True; phase Provisioned or Running alone: its creation', () => {
      const ready = capiMachine({ conditions: [condition('InfrastructureReady', 'True', at(-9))] });
      expect(machineStartedAt(ready, 'ClusterAPI')).to.deep.equal(at(-9));
      expect(machineStartedAt(capiMachine({ phase: 'Provisioned' }), 'ClusterAPI')).to.deep.equal(
        at(-3600),
      );
      expect(machineStartedAt(capiMachine({ phase: 'Provisioning' }), 'ClusterAPI')).to.equal(
        undefined,
      );
      expect(healthPolicy(clusterApiPool()).nodeStartupTimeoutSeconds).to.equal(600);
    });
  });

  describe('maxUnhealthy and the short-circuit', () => {
    it('is a count, or a percentage rounded down but at least 1 above 0%', () => {
      expect(maxUnhealthyCount(2, 10)).to.equal(2);
      expect(maxUnhealthyCount('3', 10)).to.equal(3);
      expect(maxUnhealthyCount('40%', 10)).to.equal(4);
      expect(maxUnhealthyCount('40%', 4)).to.equal(1);
      expect(maxUnhealthyCount('40%', 1)).to.equal(1);
      expect(maxUnhealthyCount('100%', 3)).to.equal(3);
      expect(maxUnhealthyCount('0%', 10)).to.equal(0);
      expect(maxUnhealthyCount(0, 10)).to.equal(0);
    });

    it('allows remediation up to the limit, and stops it above', () => {
      expect(remediationGate(POLICY, 1, 2)).to.deep.include({
        allowed: true,
        reason: 'RemediationAllowed',
      });
      const stopped = remediationGate(POLICY, 2, 2);
      expect(stopped).to.deep.include({ allowed: false, reason: 'TooManyUnhealthy' });
      expect(stopped.message).to.equal(
        '2 of 2 cells unhealthy, maxUnhealthy 40% allows 1: nothing more is remediated, the ' +
          'cause is likely shared; fix it, or raise spec.health.maxUnhealthy',
      );
      expect(remediationGate({ ...POLICY, remediation: 'None' }, 0, 2)).to.deep.include({
        allowed: false,
        reason: 'RemediationDisabled',
      });
    });
  });

  it('asks for a resync at the earliest instant, at least 1 s ahead', () => {
    expect(resyncSeconds(NOW, [])).to.equal(undefined);
    expect(resyncSeconds(NOW, [undefined, at(90), at(30.2)])).to.equal(31);
    expect(resyncSeconds(NOW, [at(-5)])).to.equal(1);
  });
});
