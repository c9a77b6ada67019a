// The tenant roles of manifests/rbac/tenant-roles.yaml, statically (unit test: no cluster): what
// they aggregate into, exactly which verbs on which resources, and that KubeCell binds none of
// them. On a real apiserver, with the built-in roles aggregated by kube-controller-manager,
// test/cluster/e2e/tenancy-rbac.test.ts shows what a tenant bound to edit can and cannot do.
import { expect } from 'chai';
import { grantedPermissions, type PermissionSet } from './permissions.js';
import {
  findObject,
  kustomizationObjects,
  kustomizationResources,
  readYamlDocuments,
  type Json,
} from './support.js';

const FILE = 'manifests/rbac/tenant-roles.yaml';
const AGGREGATE = 'rbac.authorization.k8s.io/aggregate-to-';
const objects = kustomizationObjects('manifests');
const roles = readYamlDocuments(FILE);

function labels(role: Json): Record<string, string> {
  return ((role.metadata as Json).labels ?? {}) as Record<string, string>;
}

/** The built-in roles a ClusterRole aggregates into, from its labels. */
function aggregatesInto(role: Json): string[] {
  return Object.entries(labels(role))
    .filter(([key, value]) => key.startsWith(AGGREGATE) && value === 'true')
    .map(([key]) => key.slice(AGGREGATE.length))
    .sort();
}

/** `group resource: verbs` lines of a role, sorted. */
function rulesOf(granted: PermissionSet): string[] {
  return granted
    .byResource()
    .map(({ group, resource, verbs }) => `${group} ${resource}: ${[...verbs].sort().join(',')}`)
    .sort();
}

/** The namespaced kinds of a CRD under manifests/crds/, by plural. */
function crdScopes(): Map<string, string> {
  const scopes = new Map<string, string>();
  for (const file of kustomizationResources('manifests').filter((f) => f.includes('/crds/'))) {
    for (const crd of readYamlDocuments(file)) {
      const spec = crd.spec as Json;
      scopes.set(String((spec.names as Json).plural), String(spec.scope));
    }
  }
  return scopes;
}

const READ = 'get,list,watch';
const WRITE = 'create,delete,deletecollection,get,list,patch,update,watch';

describe('tenant roles (manifests/rbac/tenant-roles.yaml)', () => {
  it('are part of the install, and are the three ClusterRoles of the file', () => {
    expect(kustomizationResources('manifests')).to.include(FILE);
    expect(
      roles.map((role) => `${String(role.kind)}/${String((role.metadata as Json).name)}`),
    ).to.deep.equal([
      'ClusterRole/kubecell-aggregate-to-view',
      'ClusterRole/kubecell-aggregate-to-edit',
      'ClusterRole/kubecell-cells-classes-viewer',
    ]);
  });

  it('view: reads VirtualClusters and plans (and their status), aggregated into view', () => {
    const role = findObject(objects, 'ClusterRole', 'kubecell-aggregate-to-view');
    expect(aggregatesInto(role)).to.deep.equal(['view']);
    expect(rulesOf(grantedPermissions(role))).to.deep.equal([
      `kubecell.io virtualclusterplans/status: ${READ}`,
      `kubecell.io virtualclusterplans: ${READ}`,
      `kubecell.io virtualclusters/status: ${READ}`,
      `kubecell.io virtualclusters: ${READ}`,
    ]);
  });

  it('edit and admin: write VirtualClusters and plans, never their status', () => {
    const role = findObject(objects, 'ClusterRole', 'kubecell-aggregate-to-edit');
    expect(aggregatesInto(role)).to.deep.equal(['admin', 'edit']);
    expect(rulesOf(grantedPermissions(role))).to.deep.equal([
      `kubecell.io virtualclusterplans: ${WRITE}`,
      `kubecell.io virtualclusters: ${WRITE}`,
    ]);
  });

  it('every namespaced kind but Cell is a tenant kind, in both aggregated roles', () => {
    // A new namespaced kind must be decided on here: a tenant kind, or the platform's.
    const scopes = crdScopes();
    const namespaced = [...scopes]
      .filter(([, scope]) => scope === 'Namespaced')
      .map(([plural]) => plural)
      .filter((plural) => plural !== 'cells')
      .sort();
    expect(namespaced).to.deep.equal(['virtualclusterplans', 'virtualclusters']);
    for (const name of ['kubecell-aggregate-to-view', 'kubecell-aggregate-to-edit']) {
      const granted = grantedPermissions(findObject(objects, 'ClusterRole', name));
      for (const plural of namespaced)
        expect(granted.has('kubecell.io', plural, 'get')).to.equal(true);
    }
  });

  it('Cells and classes: read only, aggregated into nothing (bound cluster-wide on purpose)', () => {
    const role = findObject(objects, 'ClusterRole', 'kubecell-cells-classes-viewer');
    expect(aggregatesInto(role)).to.deep.equal([]);
    expect(role.aggregationRule).to.equal(undefined);
    expect(rulesOf(grantedPermissions(role))).to.deep.equal([
      `kubecell.io cells/status: ${READ}`,
      `kubecell.io cells: ${READ}`,
      `kubecell.io virtualnodeclasses/status: ${READ}`,
      `kubecell.io virtualnodeclasses: ${READ}`,
    ]);
    // VirtualNodeClasses are cluster-scoped: a RoleBinding (which aggregation into view would
    // amount to for a tenant) could not grant them.
    expect(crdScopes().get('virtualnodeclasses')).to.equal('Cluster');
  });

  it('grant nothing outside kubecell.io, no GPUCellPools, no secrets', () => {
    for (const role of roles) {
      const lines = rulesOf(grantedPermissions(role));
      expect(lines.filter((line) => !line.startsWith('kubecell.io '))).to.deep.equal([]);
      expect(lines.filter((line) => line.includes('gpucellpools'))).to.deep.equal([]);
    }
  });

  it('are bound to no one by the install: the platform team binds them per team', () => {
    const names = new Set(roles.map((role) => String((role.metadata as Json).name)));
    const bindings = objects
      .filter((object) => ['ClusterRoleBinding', 'RoleBinding'].includes(String(object.kind)))
      .filter((binding) => names.has(String((binding.roleRef as Json).name)));
    expect(bindings).to.deep.equal([]);
  });
});
