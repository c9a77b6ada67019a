import { expect } from 'chai';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { HookRegistry } from './registry.js';

const parent = { apiVersion: 'kubecell.io/v1alpha1', kind: 'Cell', metadata: { name: 'c1' } };

interface Cell extends KubernetesObject {
  spec: { machineProfile: { name: string } };
}

describe('HookRegistry', () => {
  it('resolves a registered hook and runs the handler on a well-formed body', async () => {
    const registry = new HookRegistry().registerComposite<Cell>('cell', {
      sync: (req) => ({ status: { profile: req.parent.spec.machineProfile.name }, children: [] }),
    });
    const lookup = registry.lookup('cell', 'sync');
    if (!lookup.found) throw new Error(lookup.message);
    expect(lookup.hook).to.include({
      controller: 'cell',
      hook: 'sync',
      controllerType: 'composite',
      responseKind: 'compositeSync',
    });
    const prepared = lookup.hook.prepare({
      parent: { ...parent, spec: { machineProfile: { name: 'a100' } } },
    });
    if (!prepared.ok) throw new Error(prepared.problems.join('; '));
    expect(await prepared.value()).to.deep.equal({ status: { profile: 'a100' }, children: [] });
  });

  it('does not call the handler when the body is malformed', () => {
    let called = false;
    const registry = new HookRegistry().registerComposite('cell', {
      sync: () => {
        called = true;
        return { children: [] };
      },
    });
    const lookup = registry.lookup('cell', 'sync');
    if (!lookup.found) throw new Error(lookup.message);
    expect(lookup.hook.prepare({ children: {} })).to.deep.equal({
      ok: false,
      problems: ['request.parent: required'],
    });
    expect(called).to.equal(false);
  });

  it('uses the customize checks for customize and the decorator checks for decorators', () => {
    const registry = new HookRegistry().registerDecorator('class-usage', {
      customize: () => ({ relatedResources: [] }),
      sync: () => ({ attachments: [] }),
    });
    const customize = registry.lookup('class-usage', 'customize');
    const sync = registry.lookup('class-usage', 'sync');
    if (!customize.found || !sync.found) throw new Error('not found');
    expect(customize.hook.responseKind).to.equal('customize');
    expect(sync.hook.controllerType).to.equal('decorator');
    expect(sync.hook.responseKind).to.equal('decoratorSync');
    // Metacontroller's decorator request carries the decorated object under `object`.
    expect(sync.hook.prepare({ parent }).ok).to.equal(false);
    expect(sync.hook.prepare({ object: parent, attachments: {} }).ok).to.equal(true);
  });

  it('says why there is no handler', () => {
    const registry = new HookRegistry().registerComposite('cell', {
      sync: () => ({ children: [] }),
    });
    expect(registry.lookup('plan', 'sync')).to.deep.equal({
      found: false,
      message: 'unknown controller "plan"; controllers are cell',
    });
    expect(registry.lookup('cell', 'finalize')).to.deep.equal({
      found: false,
      message: 'controller "cell" has no finalize hook',
    });
    expect(registry.lookup('cell', 'delete')).to.deep.equal({
      found: false,
      message: 'unknown hook "delete"; hooks are customize, sync, finalize',
    });
    expect(registry.lookup('dogs', 'sync')).to.deep.equal({
      found: false,
      message: 'unknown controller "dogs"; controllers are cell',
    });
  });

  it('refuses to register a controller twice', () => {
    const registry = new HookRegistry().registerComposite('cell', {
      sync: () => ({ children: [] }),
    });
    expect(() => registry.registerComposite('cell', { sync: () => ({ children: [] }) })).to.throw(
      'controller "cell" is already registered',
    );
  });

  it('lists what is registered', () => {
    const registry = new HookRegistry()
      .registerComposite('virtualcluster', {
        sync: () => ({ children: [] }),
        finalize: () => ({ children: [], finalized: true }),
      })
      .registerDecorator('host-namespace', { sync: () => ({ attachments: [] }) });
    expect(registry.registered()).to.deep.equal([
      { controller: 'virtualcluster', controllerType: 'composite', hooks: ['sync', 'finalize'] },
      { controller: 'host-namespace', controllerType: 'decorator', hooks: ['sync'] },
    ]);
  });
});
