import { expect } from 'chai';
import type { FeasibilityCheck, NamespaceSelector } from '../generated/types/index.js';
import {
  decide,
  evaluateFeasibility,
  MAX_CHECKS,
  type FeasibilityInput,
  type FeasibilityResult,
} from './evaluate.js';
import { CHECK_ORDER, REASONS_BY_CHECK } from './reasons.js';
import { acceptedInput, NOW, smallClass, virtualCluster } from './testing.js';

/** Every report produced in this file, to check reasons against REASONS_BY_CHECK at the end. */
const seen: FeasibilityCheck[] = [];

function evaluate(change: (input: FeasibilityInput) => void = () => {}): FeasibilityResult {
  const input = acceptedInput();
  change(input);
  const result = evaluateFeasibility(input);
  seen.push(...result.checks);
  return result;
}

function only(result: FeasibilityResult, name: FeasibilityCheck['name'], resource?: string) {
  const found = result.checks.filter(
    (c) => c.name === name && (resource === undefined || c.resource === resource),
  );
  expect(found, `${name} ${resource ?? ''}`).to.have.length(1);
  return found[0] as FeasibilityCheck;
}

function status(input: FeasibilityInput) {
  const cell = input.cell;
  if (cell?.status === undefined) throw new Error('fixture has no Cell status');
  return cell.status;
}

function inventory(input: FeasibilityInput, resource: string) {
  const entry = status(input).inventory?.[resource];
  if (entry === undefined) throw new Error(`fixture has no ${resource} inventory`);
  return entry;
}

function workloadHard(input: FeasibilityInput): Record<string, string | number | undefined> {
  const cls = input.virtualNodeClass;
  if (cls === undefined) throw new Error('fixture has no class');
  return cls.spec.entitlement.workloadHard;
}

describe('feasibility evaluation', () => {
  describe('a placement that fits', () => {
    it('is Accepted with every check passing, in the documented order', () => {
      const result = evaluate();
      expect(result.decision).to.equal('Accepted');
      expect(
        result.checks.map((c) => [c.name, c.resource ?? '', c.result, c.reason]),
      ).to.deep.equal([
        ['CellFound', '', 'Pass', 'CellFound'],
        ['ClassFound', '', 'Pass', 'ClassFound'],
        ['CellLive', '', 'Pass', 'CellLive'],
        ['InventoryFresh', '', 'Pass', 'InventoryFresh'],
        ['ResourceOffered', 'nvidia.com/gpu', 'Pass', 'DeviceDeclared'],
        ['Capacity', 'cpu', 'Pass', 'CapacityAvailable'],
        ['Capacity', 'memory', 'Pass', 'CapacityAvailable'],
        ['Capacity', 'nvidia.com/gpu', 'Pass', 'CapacityAvailable'],
        ['Storage', 'requests.storage', 'Pass', 'StorageAvailable'],
        ['NodePorts', '', 'Pass', 'NodePortsAvailable'],
        ['NamespaceAvailable', '', 'Pass', 'NamespaceAvailable'],
      ]);
      const order = result.checks.map((c) => CHECK_ORDER.indexOf(c.name));
      expect(order).to.deep.equal([...order].sort((a, b) => a - b));
    });

    it('reports the figures behind each comparison, in canonical quantities', () => {
      const result = evaluate();
      expect(only(result, 'Capacity', 'cpu')).to.deep.equal({
        name: 'Capacity',
        resource: 'cpu',
        required: '4',
        available: '23500m',
        result: 'Pass',
        reason: 'CapacityAvailable',
        message:
          'The class needs 4 cpu; the Cell can still promise 23500m (allocatable 63500m − max(requested + pending 13, committed 40)).',
      });
      expect(only(result, 'Storage')).to.include({ required: '100Gi', available: '2Ti' });
      expect(only(result, 'NodePorts')).to.include({ required: '1', available: '2758' });
    });

    it('gives byte-identical output for the same input', () => {
      expect(JSON.stringify(evaluate())).to.equal(JSON.stringify(evaluate()));
    });

    it('does not modify its input', () => {
      const input = acceptedInput();
      const before = JSON.stringify(input);
      evaluateFeasibility(input);
      expect(JSON.stringify(input)).to.equal(before);
    });
  });

  describe('CellFound and ClassFound', () => {
    it('is Unknown on a missing Cell (it may appear) and leaves out the checks that need it', () => {
      const result = evaluate((input) => (input.cell = undefined));
      expect(result.decision).to.equal('Unknown');
      expect(result.checks.map((c) => `${c.name}:${c.result}:${c.reason}`)).to.deep.equal([
        'CellFound:Unknown:CellNotFound',
        'ClassFound:Pass:ClassFound',
        'NamespaceAvailable:Pass:NamespaceAvailable',
      ]);
      expect(result.checks[0]?.message).to.include('Cell cell1 does not exist');
    });

    it('is Unknown on a missing class and leaves out the checks that need it', () => {
      const result = evaluate((input) => (input.virtualNodeClass = undefined));
      expect(result.decision).to.equal('Unknown');
      expect(result.checks.map((c) => `${c.name}:${c.result}`)).to.deep.equal([
        'CellFound:Pass',
        'ClassFound:Unknown',
        'CellLive:Pass',
        'InventoryFresh:Pass',
        'NodePorts:Pass',
        'NamespaceAvailable:Pass',
      ]);
      expect(only(result, 'ClassFound')).to.include({
        reason: 'ClassNotFound',
        message:
          'VirtualNodeClass small does not exist (or was not observed yet); create it or name an existing class in spec.classRef.name. The placement is evaluated again when it appears.',
      });
    });
  });

  describe('CellLive', () => {
    it('is Unknown when the Cell has no status yet', () => {
      const result = evaluate((input) => {
        if (input.cell) delete input.cell.status;
      });
      expect(only(result, 'CellLive')).to.include({ result: 'Unknown', reason: 'CellNotObserved' });
      expect(result.decision).to.equal('Unknown');
    });

    it('is Unknown when the phase is not Ready (it may become Ready)', () => {
      const result = evaluate((input) => (status(input).phase = 'Degraded'));
      expect(only(result, 'CellLive')).to.include({ result: 'Unknown', reason: 'CellNotReady' });
      expect(only(result, 'CellLive').message).to.include('Degraded');
      expect(result.decision).to.equal('Unknown');
    });

    it('fails when the lease is stale', () => {
      const result = evaluate((input) => {
        const lease = status(input).managedCluster;
        if (lease) lease.leaseFresh = false;
      });
      expect(only(result, 'CellLive')).to.include({ result: 'Fail', reason: 'LeaseStale' });
    });

    it('is Unknown when lease freshness is not reported', () => {
      const missingFlag = evaluate((input) => {
        const lease = status(input).managedCluster;
        if (lease) delete lease.leaseFresh;
      });
      expect(only(missingFlag, 'CellLive')).to.include({
        result: 'Unknown',
        reason: 'LeaseUnknown',
      });
      const noManagedCluster = evaluate((input) => delete status(input).managedCluster);
      expect(only(noManagedCluster, 'CellLive')).to.include({
        result: 'Unknown',
        reason: 'LeaseUnknown',
      });
      expect(noManagedCluster.decision).to.equal('Unknown');
    });

    it('names no time in its messages, whatever the Cell reports', () => {
      const messages = [true, false, undefined].map((leaseFresh) => {
        const result = evaluate((input) => {
          const lease = status(input).managedCluster;
          if (lease) lease.leaseFresh = leaseFresh;
          input.now = new Date('2026-11-30T00:03:00Z');
        });
        return only(result, 'CellLive').message ?? '';
      });
      expect(messages[0]).to.equal("The Cell is Ready and its ManagedCluster's lease is fresh.");
      for (const message of messages) expect(message).not.to.match(/\d{4}-\d{2}-\d{2}|\d+s\b/);
    });
  });

  describe('InventoryFresh', () => {
    it('is Unknown without an InventoryFresh condition, and Capacity waits for it', () => {
      const result = evaluate((input) => (status(input).conditions = []));
      expect(only(result, 'InventoryFresh')).to.include({
        result: 'Unknown',
        reason: 'InventoryNotObserved',
      });
      for (const c of result.checks.filter((c) => c.name === 'Capacity')) {
        expect(c).to.include({ result: 'Unknown', reason: 'InventoryNotFresh' });
      }
      expect(only(result, 'Capacity', 'cpu')).to.include({ required: '4', available: '23500m' });
      expect(result.decision).to.equal('Unknown');
    });

    it('is Unknown when the condition is not True, quoting it', () => {
      const result = evaluate((input) => {
        const condition = status(input).conditions?.[0];
        if (condition) {
          condition.status = 'False';
          condition.reason = 'PodListFailed';
          condition.message = 'pods: forbidden';
        }
      });
      expect(only(result, 'InventoryFresh')).to.include({
        result: 'Unknown',
        reason: 'InventoryStale',
        message:
          "The Cell's InventoryFresh condition is False (PodListFailed: pods: forbidden); capacity cannot be judged until it is True.",
      });
    });

    it('is Unknown when status.observedAt is older than the limit (600 s), and passes at the limit', () => {
      // The fixture's observedAt is 2026-11-29T23:59:50Z.
      const atLimit = evaluate((input) => (input.now = new Date('2026-11-30T00:09:50Z')));
      expect(only(atLimit, 'InventoryFresh').result).to.equal('Pass');
      const past = evaluate((input) => (input.now = new Date('2026-11-30T00:09:51Z')));
      expect(only(past, 'InventoryFresh')).to.include({
        result: 'Unknown',
        reason: 'InventoryOutdated',
        message:
          "The Cell's inventory was last confirmed more than 600s ago (status.observedAt); the kubecell-cell controller may not be syncing it.",
      });
      for (const c of past.checks.filter((c) => c.name === 'Capacity')) {
        expect(c).to.include({ result: 'Unknown', reason: 'InventoryNotFresh' });
      }
      expect(past.decision).to.equal('Unknown');
      const muchLater = evaluate((input) => (input.now = new Date('2026-11-30T05:00:00Z')));
      expect(only(muchLater, 'InventoryFresh')).to.deep.equal(only(past, 'InventoryFresh'));
      const custom = evaluate((input) => {
        input.now = new Date('2026-11-30T00:09:51Z');
        input.inventoryMaxAgeSeconds = 900;
      });
      expect(only(custom, 'InventoryFresh').result).to.equal('Pass');
    });

    it('gives the same report whatever the time of a fresh observation (no loop with the Cell)', () => {
      // The Cell refreshes its heartbeat (status.observedAt) at least every 300 s, and a pending
      // placement evaluates again and again: the report must not change with that time or with
      // the time of the evaluation.
      const restamp = (stamp: string, now: string) => (input: FeasibilityInput) => {
        status(input).observedAt = stamp;
        input.now = new Date(now);
      };
      const earlier = evaluate(restamp('2026-11-30T00:00:10Z', '2026-11-30T00:01:00Z'));
      const later = evaluate(restamp('2026-11-30T00:05:11Z', '2026-11-30T00:09:00Z'));
      expect(later.checks).to.deep.equal(earlier.checks);
      expect(only(later, 'InventoryFresh')).to.include({
        result: 'Pass',
        message: "The Cell's inventory is current (its status.observedAt is at most 600s old).",
      });
    });

    it('is Unknown when status.observedAt is missing or unreadable, even with the condition True', () => {
      for (const observedAt of [undefined, 'yesterday']) {
        const result = evaluate((input) => (status(input).observedAt = observedAt));
        expect(only(result, 'InventoryFresh')).to.include({
          result: 'Unknown',
          reason: 'InventoryNotObserved',
          message:
            "The Cell's status has no readable observedAt: the Cell controller has not confirmed its inventory yet; wait for its next sync.",
        });
        expect(result.decision).to.equal('Unknown');
      }
    });
  });

  describe('ResourceOffered', () => {
    it('passes with NoExtendedResources when the entitlement names none', () => {
      const result = evaluate((input) => {
        const hard = workloadHard(input);
        delete hard['requests.nvidia.com/gpu'];
      });
      expect(only(result, 'ResourceOffered')).to.deep.equal({
        name: 'ResourceOffered',
        result: 'Pass',
        reason: 'NoExtendedResources',
        message: 'The entitlement names no extended resources.',
      });
    });

    it('matches resource names character for character', () => {
      const result = evaluate((input) => {
        const hard = workloadHard(input);
        delete hard['requests.nvidia.com/gpu'];
        hard['requests.nvidia.com/GPU'] = '1';
      });
      expect(only(result, 'ResourceOffered', 'nvidia.com/GPU')).to.include({
        result: 'Fail',
        reason: 'DeviceNotDeclared',
      });
      expect(only(result, 'ResourceOffered', 'nvidia.com/GPU').message).to.include(
        'declared: nvidia.com/gpu',
      );
      expect(result.decision).to.equal('Rejected');
    });

    it('checks limits.<name> too, once per resource, sorted', () => {
      const result = evaluate((input) => {
        const hard = workloadHard(input);
        hard['limits.nvidia.com/gpu'] = '2';
        hard['limits.huawei.com/Ascend910B3'] = '1';
      });
      const offered = result.checks.filter((c) => c.name === 'ResourceOffered');
      expect(offered.map((c) => [c.resource, c.result])).to.deep.equal([
        ['huawei.com/Ascend910B3', 'Fail'],
        ['nvidia.com/gpu', 'Pass'],
      ]);
      expect(offered[0]?.message).to.include('Machine profile a100 does not declare');
    });

    it('fails every extended resource on a CPU-only profile', () => {
      const result = evaluate((input) => {
        if (input.cell) delete input.cell.spec.machineProfile.devices;
      });
      expect(only(result, 'ResourceOffered', 'nvidia.com/gpu').message).to.include(
        '(declared: none)',
      );
    });

    it('keeps a report within maxItems when a class names dozens of undeclared resources', () => {
      const result = evaluate((input) => {
        const hard = workloadHard(input);
        for (let i = 0; i < 64; i += 1)
          hard[`requests.example.com/dev${String(i).padStart(2, '0')}`] = '1';
      });
      expect(result.checks.length).to.be.at.most(MAX_CHECKS);
      const offered = result.checks.filter((c) => c.name === 'ResourceOffered');
      expect(offered.map((c) => c.result)).to.deep.equal(['Fail', 'Pass']);
      expect(offered[0]?.message).to.include('does not declare 64 extended resources');
      expect(result.decision).to.equal('Rejected');
    });
  });

  describe('Capacity', () => {
    it('compares exactly across suffixes: 1500m fits in 2, 2 does not fit in 1500m', () => {
      const fits = evaluate((input) => {
        workloadHard(input)['requests.cpu'] = '1500m';
        inventory(input, 'cpu').availableEstimate = '2';
        inventory(input, 'cpu').allocatable = '42';
      });
      expect(only(fits, 'Capacity', 'cpu')).to.include({
        required: '1500m',
        available: '2',
        result: 'Pass',
      });
      const short = evaluate((input) => {
        workloadHard(input)['requests.cpu'] = '2';
        inventory(input, 'cpu').availableEstimate = '1500m';
      });
      expect(only(short, 'Capacity', 'cpu')).to.include({
        required: '2',
        available: '1500m',
        result: 'Fail',
        reason: 'InsufficientCapacity',
      });
      expect(only(short, 'Capacity', 'cpu').message).to.include('Choose a smaller class');
      expect(short.decision).to.equal('Rejected');
    });

    it('treats 8Gi and 8192Mi as equal: an exact fit passes', () => {
      const result = evaluate((input) => {
        workloadHard(input)['requests.memory'] = '8192Mi';
        inventory(input, 'memory').availableEstimate = '8Gi';
      });
      expect(only(result, 'Capacity', 'memory')).to.include({
        required: '8Gi',
        available: '8Gi',
        result: 'Pass',
      });
      const oneByteMore = evaluate((input) => {
        workloadHard(input)['requests.memory'] = '8589934593';
        inventory(input, 'memory').availableEstimate = '8Gi';
      });
      expect(only(oneByteMore, 'Capacity', 'memory').result).to.equal('Fail');
    });

    it('maps plain cpu and memory keys and takes the smaller of two forms of one resource', () => {
      const result = evaluate((input) => {
        const hard = workloadHard(input);
        hard.cpu = '3';
        hard['requests.cpu'] = '5';
        delete hard['requests.memory'];
        hard.memory = '1Gi';
      });
      expect(only(result, 'Capacity', 'cpu').required).to.equal('3');
      expect(only(result, 'Capacity', 'memory').required).to.equal('1Gi');
    });

    it('does not capacity-check limits.*, pods, count/* or services', () => {
      const result = evaluate((input) => {
        const hard = workloadHard(input);
        hard['limits.cpu'] = '100000';
        hard['limits.ephemeral-storage'] = '100Ti';
        hard.pods = '100000';
        hard.services = '1000';
        hard['count/jobs.batch'] = '1000';
      });
      expect(result.decision).to.equal('Accepted');
      expect(
        result.checks.filter((c) => c.name === 'Capacity').map((c) => c.resource),
      ).to.deep.equal(['cpu', 'memory', 'nvidia.com/gpu']);
    });

    it('leaves a resource no Ready Node offers yet Unknown, and passes a zero requirement', () => {
      const result = evaluate((input) => {
        const hard = workloadHard(input);
        hard['requests.ephemeral-storage'] = '10Gi';
        hard['requests.hugepages-2Mi'] = '0';
      });
      expect(only(result, 'Capacity', 'ephemeral-storage')).to.include({
        required: '10Gi',
        available: '0',
        result: 'Unknown',
        reason: 'ResourceNotInInventory',
      });
      expect(only(result, 'Capacity', 'hugepages-2Mi')).to.include({
        required: '0',
        result: 'Pass',
        reason: 'CapacityAvailable',
      });
    });

    it('does not conclude a shortfall while another resource of the class is offered by no Node yet', () => {
      // The Cell's first Node is Ready, the others are still joining: no GPU in the inventory
      // yet, and too little cpu. Rejected now would be concluded for good; Unknown is evaluated
      // again when the Nodes come.
      const result = evaluate((input) => {
        delete input.cell!.status!.inventory!['nvidia.com/gpu'];
        const cpu = inventory(input, 'cpu');
        cpu.allocatable = '3';
        cpu.availableEstimate = '3';
        cpu.committed = '0';
        cpu.requested = '0';
        cpu.pending = '0';
      });
      expect(result.decision).to.equal('Unknown');
      expect(only(result, 'Capacity', 'nvidia.com/gpu')).to.include({
        result: 'Unknown',
        reason: 'ResourceNotInInventory',
      });
      const cpu = only(result, 'Capacity', 'cpu');
      expect(cpu).to.include({
        required: '4',
        available: '3',
        result: 'Unknown',
        reason: 'AwaitingResources',
      });
      expect(cpu.message).to.equal(
        "The class needs 4 cpu and the Cell can only promise 3 now, but no Ready Node offers nvidia.com/gpu yet, which the class also needs: the Cell's Nodes may still be joining, so this is decided when every resource is offered.",
      );
    });

    it('fails on an over-committed Cell with a negative availableEstimate', () => {
      const result = evaluate((input) => {
        const cpu = inventory(input, 'cpu');
        cpu.allocatable = '60';
        cpu.committed = '62500m';
        cpu.availableEstimate = '-2500m';
      });
      expect(only(result, 'Capacity', 'cpu')).to.include({
        available: '-2500m',
        result: 'Fail',
        reason: 'InsufficientCapacity',
      });
    });

    it("takes the committed capacity from the Cell's inventory alone", () => {
      const fromCell = evaluate((input) => {
        inventory(input, 'cpu').committed = '48';
        inventory(input, 'nvidia.com/gpu').committed = '6';
        input.virtualClusters = [];
      });
      // 63.5 − max(requested + pending 13, committed 48) = 15.5
      expect(only(fromCell, 'Capacity', 'cpu')).to.include({ available: '15500m', result: 'Pass' });
      expect(only(fromCell, 'Capacity', 'cpu').message).to.equal(
        'The class needs 4 cpu; the Cell can still promise 15500m (allocatable 63500m − max(requested + pending 13, committed 48)).',
      );
      // GPUs: 8 − max(2, 6) = 2 available, the class needs 2.
      expect(only(fromCell, 'Capacity', 'nvidia.com/gpu')).to.include({
        available: '2',
        result: 'Pass',
      });
      const full = evaluate((input) => (inventory(input, 'nvidia.com/gpu').committed = '7'));
      expect(only(full, 'Capacity', 'nvidia.com/gpu')).to.include({
        available: '1',
        result: 'Fail',
        reason: 'InsufficientCapacity',
      });
    });

    it('does not sum the VirtualClusters it is given: the Cell counts them (design point 6)', () => {
      const alone = evaluate((input) => (input.virtualClusters = []));
      const withOthers = evaluate((input) => {
        // Resolved to this Cell after its last sync, with more than it has left: not counted.
        input.virtualClusters = [
          virtualCluster('a', 'tenant-b', {
            cellName: 'cell1',
            workloadHard: { 'requests.cpu': '40', 'requests.nvidia.com/gpu': '4' },
          }),
          virtualCluster('b', 'tenant-c', {
            cellName: 'cell1',
            workloadHard: { cpu: '8', 'requests.cpu': '10', 'requests.nvidia.com/gpu': '2' },
          }),
          virtualCluster('e', 'tenant-f'),
        ];
      });
      const capacity = (result: FeasibilityResult) =>
        result.checks.filter((c) => c.name === 'Capacity');
      expect(capacity(withOthers)).to.deep.equal(capacity(alone));
      expect(only(withOthers, 'Capacity', 'cpu')).to.include({ available: '23500m' });
      expect(withOthers.decision).to.equal('Accepted');
    });

    it("never credits more than the Cell's own availableEstimate", () => {
      const result = evaluate((input) => {
        inventory(input, 'cpu').availableEstimate = '3';
        input.virtualClusters = [];
      });
      expect(only(result, 'Capacity', 'cpu')).to.include({ available: '3', result: 'Fail' });
    });

    it("uses the Cell's availableEstimate alone when allocatable is missing", () => {
      const result = evaluate((input) => {
        const cpu = inventory(input, 'cpu');
        delete cpu.allocatable;
        cpu.availableEstimate = '5';
      });
      expect(only(result, 'Capacity', 'cpu')).to.include({ available: '5', result: 'Pass' });
      expect(only(result, 'Capacity', 'cpu').message).to.include("(the Cell's availableEstimate)");
    });

    it('is Unknown when the inventory entry has nothing to compare with', () => {
      const result = evaluate((input) => {
        status(input).inventory = { cpu: { capacity: '64' }, memory: {}, 'nvidia.com/gpu': {} };
      });
      expect(only(result, 'Capacity', 'cpu')).to.include({
        result: 'Unknown',
        reason: 'InventoryIncomplete',
      });
    });

    it('fails an entitlement value that does not parse, and is Unknown on a bad inventory value', () => {
      const badClass = evaluate((input) => (workloadHard(input)['requests.cpu'] = 'four'));
      expect(only(badClass, 'Capacity', 'cpu')).to.include({
        result: 'Fail',
        reason: 'InvalidQuantity',
      });
      expect(only(badClass, 'Capacity', 'cpu').message).to.include('invalid quantity "four"');
      const badCell = evaluate((input) => (inventory(input, 'cpu').requested = '12 cores'));
      expect(only(badCell, 'Capacity', 'cpu')).to.include({
        result: 'Unknown',
        reason: 'InvalidInventory',
      });
    });
  });

  describe('Storage', () => {
    it('passes when the class limits no storage', () => {
      const result = evaluate((input) => delete workloadHard(input)['requests.storage']);
      expect(only(result, 'Storage')).to.include({
        resource: 'requests.storage',
        result: 'Pass',
        reason: 'NoStorageRequested',
      });
    });

    it('fails when TopoLVM reports less free space than the class needs', () => {
      const result = evaluate((input) => {
        const storage = status(input).storageInventory;
        if (storage) storage.freeCapacity = '99Gi';
      });
      expect(only(result, 'Storage')).to.include({
        required: '100Gi',
        available: '99Gi',
        result: 'Fail',
        reason: 'InsufficientStorage',
      });
      expect(result.decision).to.equal('Rejected');
    });

    it('takes the smaller of requests.storage and the storage-class-specific limit', () => {
      const result = evaluate((input) => {
        workloadHard(input)['topolvm-provisioner.storageclass.storage.k8s.io/requests.storage'] =
          '50Gi';
        workloadHard(input)['other.storageclass.storage.k8s.io/requests.storage'] = '1Gi';
      });
      expect(only(result, 'Storage')).to.include({
        resource: 'topolvm-provisioner.storageclass.storage.k8s.io/requests.storage',
        required: '50Gi',
      });
    });

    it('is Unknown when free capacity is not known', () => {
      const result = evaluate((input) => {
        const storage = status(input).storageInventory;
        if (storage) storage.freeCapacityKnown = false;
      });
      expect(only(result, 'Storage')).to.include({
        result: 'Unknown',
        reason: 'FreeCapacityUnknown',
      });
      expect(only(result, 'Storage')).not.to.have.property('available');
      expect(result.decision).to.equal('Unknown');
    });

    it('is Unknown when the storage inventory is not fresh or not reported', () => {
      const stale = evaluate((input) => {
        const storage = status(input).storageInventory;
        if (storage) storage.fresh = false;
      });
      expect(only(stale, 'Storage')).to.include({ result: 'Unknown', reason: 'StorageNotFresh' });
      const absent = evaluate((input) => delete status(input).storageInventory);
      expect(only(absent, 'Storage')).to.include({ result: 'Unknown', reason: 'StorageNotFresh' });
      expect(only(absent, 'Storage').message).to.include('not reported');
    });

    it('fails an invalid storage entitlement, and is Unknown on an invalid free capacity', () => {
      const badClass = evaluate((input) => (workloadHard(input)['requests.storage'] = '1TB'));
      expect(only(badClass, 'Storage')).to.include({ result: 'Fail', reason: 'InvalidQuantity' });
      const badCell = evaluate((input) => {
        const storage = status(input).storageInventory;
        if (storage) storage.freeCapacity = 'lots';
      });
      expect(only(badCell, 'Storage')).to.include({
        result: 'Unknown',
        reason: 'InvalidInventory',
      });
    });
  });

  describe('NodePorts', () => {
    it('fails when the range is exhausted', () => {
      const result = evaluate((input) => {
        const ports = status(input).nodePorts;
        if (ports) ports.allocated = 2768;
      });
      expect(only(result, 'NodePorts')).to.include({
        required: '1',
        available: '0',
        result: 'Fail',
        reason: 'NodePortRangeExhausted',
      });
    });

    it('passes with one port left, using the configured range', () => {
      const result = evaluate((input) => {
        input.nodePortRange = { first: 31000, last: 31010 };
        const ports = status(input).nodePorts;
        if (ports) ports.allocated = 10;
      });
      expect(only(result, 'NodePorts')).to.include({ available: '1', result: 'Pass' });
      expect(only(result, 'NodePorts').message).to.equal(
        "1 of 11 NodePorts (31000-31010) are free; the VirtualCluster's API needs one.",
      );
    });

    it('is Unknown when usage is not reported or not fresh', () => {
      const absent = evaluate((input) => delete status(input).nodePorts);
      expect(only(absent, 'NodePorts')).to.include({
        result: 'Unknown',
        reason: 'NodePortsUnknown',
      });
      const stale = evaluate((input) => {
        const ports = status(input).nodePorts;
        if (ports) ports.fresh = false;
      });
      expect(only(stale, 'NodePorts')).to.include({
        result: 'Unknown',
        reason: 'NodePortsNotFresh',
      });
    });
  });

  describe('NamespaceAvailable', () => {
    it('fails when another VirtualCluster is hosted in the namespace, resolved or not', () => {
      const result = evaluate((input) => {
        input.virtualClusters = [virtualCluster('first', 'tenant-a')];
      });
      expect(only(result, 'NamespaceAvailable')).to.include({
        result: 'Fail',
        reason: 'NamespaceOccupied',
        message:
          'Namespace tenant-a already hosts VirtualCluster first; a namespace hosts at most one. Use another namespace.',
      });
    });

    it('fails when the namespace lacks the host-namespace label', () => {
      const result = evaluate((input) => (input.namespaceLabels = { team: 'a' }));
      expect(only(result, 'NamespaceAvailable')).to.include({
        result: 'Fail',
        reason: 'NotHostNamespace',
      });
      expect(only(result, 'NamespaceAvailable').message).to.include(
        'kubectl label namespace tenant-a kubecell.io/host-namespace=true',
      );
    });

    it('does not check the label when the namespace was not observed', () => {
      const result = evaluate((input) => delete input.namespaceLabels);
      expect(only(result, 'NamespaceAvailable').result).to.equal('Pass');
    });
  });

  describe('NamespaceAllowed', () => {
    const labels = (extra: Record<string, string> = {}) => ({
      'kubecell.io/host-namespace': 'true',
      'kubernetes.io/metadata.name': 'tenant-a',
      ...extra,
    });
    const restrict = (
      input: FeasibilityInput,
      cell: unknown,
      cls: unknown,
      /** `null`: the Namespace was not observed. */
      namespaceLabels: Record<string, string> | null = labels(),
    ) => {
      if (cell !== undefined && input.cell) {
        input.cell.spec.namespaceSelector = cell as NamespaceSelector;
      }
      if (cls !== undefined && input.virtualNodeClass) {
        input.virtualNodeClass.spec.namespaceSelector = cls as NamespaceSelector;
      }
      if (namespaceLabels === null) delete input.namespaceLabels;
      else input.namespaceLabels = namespaceLabels;
    };

    it('is not reported when neither the Cell nor the class sets a namespaceSelector', () => {
      const result = evaluate();
      expect(result.checks.map((c) => c.name)).to.not.include('NamespaceAllowed');
    });

    it('passes, third in the report, when both selectors select the namespace', () => {
      const result = evaluate((input) =>
        restrict(
          input,
          { matchLabels: { 'example.com/tier': 'gpu' } },
          {
            matchExpressions: [
              { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['tenant-a'] },
              { key: 'example.com/frozen', operator: 'DoesNotExist' },
            ],
          },
          labels({ 'example.com/tier': 'gpu' }),
        ),
      );
      expect(result.decision).to.equal('Accepted');
      expect(result.checks[2]).to.deep.equal({
        name: 'NamespaceAllowed',
        result: 'Pass',
        reason: 'NamespaceAllowed',
        message:
          'Namespace tenant-a is selected by the namespaceSelector of Cell cell1 (example.com/tier=gpu) and the namespaceSelector of VirtualNodeClass small (kubernetes.io/metadata.name in (tenant-a),!example.com/frozen).',
      });
      const order = result.checks.map((c) => CHECK_ORDER.indexOf(c.name));
      expect(order).to.deep.equal([...order].sort((a, b) => a - b));
    });

    it("rejects a namespace the class's selector does not select, naming the rule", () => {
      const result = evaluate((input) =>
        restrict(input, undefined, { matchLabels: { 'example.com/tier': 'large' } }),
      );
      expect(result.decision).to.equal('Rejected');
      expect(only(result, 'NamespaceAllowed')).to.deep.equal({
        name: 'NamespaceAllowed',
        result: 'Fail',
        reason: 'NamespaceNotAllowed',
        message:
          'Namespace tenant-a is not allowed by the namespaceSelector of VirtualNodeClass small (example.com/tier=large): the platform team restricts which namespaces may use VirtualNodeClass small. Use a Cell and a VirtualNodeClass whose namespaceSelector selects tenant-a, or ask the platform team to label the namespace or widen the selector.',
      });
      // The other checks still run: the report says everything that stands in the way.
      expect(result.checks.filter((c) => c.result !== 'Pass').map((c) => c.name)).to.deep.equal([
        'NamespaceAllowed',
      ]);
    });

    it("rejects a namespace the Cell's selector does not select, and names both when both refuse", () => {
      const cellOnly = evaluate((input) =>
        restrict(
          input,
          {
            matchExpressions: [
              { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['tenant-a'] },
            ],
          },
          {},
        ),
      );
      expect(only(cellOnly, 'NamespaceAllowed')).to.include({
        result: 'Fail',
        reason: 'NamespaceNotAllowed',
      });
      expect(only(cellOnly, 'NamespaceAllowed').message).to.match(
        /^Namespace tenant-a is not allowed by the namespaceSelector of Cell cell1 \(kubernetes\.io\/metadata\.name notin \(tenant-a\)\): .* may use Cell cell1\./,
      );

      const both = evaluate((input) =>
        restrict(
          input,
          { matchExpressions: [{ key: 'example.com/gpu', operator: 'Exists' }] },
          { matchLabels: { team: 'research' } },
        ),
      );
      expect(only(both, 'NamespaceAllowed').message).to.include(
        'Namespace tenant-a is not allowed by the namespaceSelector of Cell cell1 (example.com/gpu) and the namespaceSelector of VirtualNodeClass small (team=research): the platform team restricts which namespaces may use them.',
      );
    });

    it('an empty selector selects every namespace', () => {
      const result = evaluate((input) => restrict(input, {}, {}));
      expect(only(result, 'NamespaceAllowed')).to.include({
        result: 'Pass',
        message:
          'Namespace tenant-a is selected by the namespaceSelector of Cell cell1 ({}) and the namespaceSelector of VirtualNodeClass small ({}).',
      });
    });

    it('is Unknown when the namespace was not observed', () => {
      const result = evaluate((input) =>
        restrict(input, undefined, { matchLabels: { team: 'a' } }, null),
      );
      expect(result.decision).to.equal('Unknown');
      expect(only(result, 'NamespaceAllowed')).to.include({
        result: 'Unknown',
        reason: 'NamespaceLabelsUnknown',
      });
      expect(only(result, 'NamespaceAllowed').message).to.include(
        'Namespace tenant-a was not observed, so the namespaceSelector of VirtualNodeClass small (team=a) cannot be checked',
      );
    });

    it('a malformed selector selects nothing (fails closed)', () => {
      const result = evaluate((input) =>
        restrict(input, { matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] }, {}),
      );
      expect(only(result, 'NamespaceAllowed')).to.include({
        result: 'Fail',
        reason: 'NamespaceNotAllowed',
      });
      expect(only(result, 'NamespaceAllowed').message).to.include(
        'the namespaceSelector of Cell cell1, which is invalid (matchExpressions[0]: In needs at least one value) and so selects no namespace',
      );
    });

    it('checks the Cell alone when the class is missing, and the class alone when the Cell is', () => {
      const noClass = evaluate((input) => {
        restrict(input, { matchLabels: { team: 'a' } }, undefined);
        input.virtualNodeClass = undefined;
      });
      expect(noClass.checks.map((c) => `${c.name}:${c.reason}`).slice(0, 3)).to.deep.equal([
        'CellFound:CellFound',
        'ClassFound:ClassNotFound',
        'NamespaceAllowed:NamespaceNotAllowed',
      ]);
      const noCell = evaluate((input) => {
        restrict(input, undefined, { matchLabels: { 'kubernetes.io/metadata.name': 'tenant-a' } });
        input.cell = undefined;
      });
      expect(only(noCell, 'NamespaceAllowed')).to.include({ result: 'Pass' });
    });
  });

  describe('decision', () => {
    it('any Fail rejects, else any Unknown is Unknown, else Accepted', () => {
      expect(decide([])).to.equal('Accepted');
      expect(decide([{ result: 'Pass' }, { result: 'Pass' }])).to.equal('Accepted');
      expect(decide([{ result: 'Pass' }, { result: 'Unknown' }])).to.equal('Unknown');
      expect(decide([{ result: 'Unknown' }, { result: 'Fail' }])).to.equal('Rejected');
    });

    it('a Fail wins over an Unknown in the same report', () => {
      const result = evaluate((input) => {
        status(input).conditions = [];
        input.virtualClusters = [virtualCluster('first', 'tenant-a')];
      });
      expect(result.decision).to.equal('Rejected');
    });
  });

  describe('reason tokens (runs last: every report above is collected)', () => {
    it('uses only documented reasons, each with its documented result, and every one of them', () => {
      expect(seen.length).to.be.greaterThan(100);
      for (const c of seen) {
        const allowed = REASONS_BY_CHECK[c.name].map((r) => `${r.reason}:${r.result}`);
        expect(allowed, `${c.name} ${c.reason}`).to.include(`${c.reason}:${c.result}`);
        expect(c.reason).to.match(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/);
        expect(c.message?.length ?? 0).to.be.at.most(4096);
      }
      const produced = new Set(seen.map((c) => `${c.name}:${c.reason}`));
      const documented = Object.entries(REASONS_BY_CHECK).flatMap(([name, reasons]) =>
        reasons.map((r) => `${name}:${r.reason}`),
      );
      // These are written by a plan's choice among Cells (hooks/plan/selection.ts,
      // hooks/placement/select.ts), not by one Cell's evaluation; the plan's tests produce them.
      const byChoice = [
        'CellFound:NoCellMatches',
        'CellFound:PlacementIndexMissing',
        'CellFound:PlacementIndexUnreadable',
      ];
      expect(
        documented.filter((key) => !produced.has(key) && !byChoice.includes(key)),
      ).to.deep.equal([]);
      expect(smallClass().metadata.name).to.equal('small');
      expect(NOW.toISOString()).to.equal('2026-11-30T00:00:00.000Z');
    });
  });
});
