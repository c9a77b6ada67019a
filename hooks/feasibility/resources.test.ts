import { expect } from 'chai';
import { formatQuantity } from '../quantity/quantity.js';
import {
  capacityRequirements,
  capacityResourceOf,
  extendedResourceOf,
  extendedResources,
  storageRequirement,
} from './resources.js';

describe('entitlement keys', () => {
  it('maps capacity-checked quota keys to inventory resources', () => {
    const cases: Array<[string, string | undefined]> = [
      ['requests.cpu', 'cpu'],
      ['cpu', 'cpu'],
      ['requests.memory', 'memory'],
      ['memory', 'memory'],
      ['requests.ephemeral-storage', 'ephemeral-storage'],
      ['ephemeral-storage', 'ephemeral-storage'],
      ['requests.hugepages-2Mi', 'hugepages-2Mi'],
      ['hugepages-1Gi', undefined],
      ['requests.nvidia.com/gpu', 'nvidia.com/gpu'],
      ['requests.huawei.com/Ascend910B3', 'huawei.com/Ascend910B3'],
      ['requests.storage', undefined],
      ['limits.cpu', undefined],
      ['limits.nvidia.com/gpu', undefined],
      ['pods', undefined],
      ['services', undefined],
      ['services.nodeports', undefined],
      ['count/deployments.apps', undefined],
      ['persistentvolumeclaims', undefined],
      ['fast.storageclass.storage.k8s.io/requests.storage', undefined],
    ];
    for (const [key, resource] of cases) expect(capacityResourceOf(key), key).to.equal(resource);
  });

  it('recognises extended resources in requests.* and limits.* keys only', () => {
    expect(extendedResourceOf('requests.nvidia.com/gpu')).to.equal('nvidia.com/gpu');
    expect(extendedResourceOf('limits.nvidia.com/gpu')).to.equal('nvidia.com/gpu');
    expect(extendedResourceOf('requests.cpu')).to.equal(undefined);
    expect(extendedResourceOf('count/deployments.apps')).to.equal(undefined);
    expect(extendedResourceOf('fast.storageclass.storage.k8s.io/requests.storage')).to.equal(
      undefined,
    );
    expect(
      extendedResources({
        'limits.b.io/x': '1',
        'requests.b.io/x': '1',
        'requests.a.io/y': '1',
        cpu: '1',
      }),
    ).to.deep.equal(['a.io/y', 'b.io/x']);
  });

  it('collects requirements, the smaller of two forms, sorted by resource', () => {
    const { required, keys, invalid } = capacityRequirements({
      'requests.memory': '8Gi',
      cpu: '4',
      'requests.cpu': '3500m',
      'limits.cpu': '8',
      'requests.nvidia.com/gpu': 2,
      'requests.hugepages-2Mi': 'x',
    });
    expect([...required].map(([r, q]) => [r, formatQuantity(q)])).to.deep.equal([
      ['cpu', '3500m'],
      ['memory', '8Gi'],
      ['nvidia.com/gpu', '2'],
    ]);
    expect(keys.get('cpu')).to.deep.equal(['cpu', 'requests.cpu']);
    expect(invalid.get('hugepages-2Mi')?.key).to.equal('requests.hugepages-2Mi');
    expect(capacityRequirements(undefined).required.size).to.equal(0);
  });

  it('finds the storage requirement', () => {
    expect(storageRequirement({ cpu: '1' }, 'fast')).to.deep.equal({ kind: 'none' });
    const general = storageRequirement({ 'requests.storage': '1Ti' }, 'fast');
    expect(
      general.kind === 'required' && [general.key, formatQuantity(general.required)],
    ).to.deep.equal(['requests.storage', '1Ti']);
    const specific = storageRequirement(
      { 'requests.storage': '1Ti', 'fast.storageclass.storage.k8s.io/requests.storage': '100Gi' },
      'fast',
    );
    expect(specific.kind === 'required' && specific.key).to.equal(
      'fast.storageclass.storage.k8s.io/requests.storage',
    );
    expect(storageRequirement({ 'requests.storage': 'big' }, 'fast').kind).to.equal('invalid');
  });
});
