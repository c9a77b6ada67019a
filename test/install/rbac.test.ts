// Least privilege, both ways, on a real apiserver. The permissions Metacontroller needs are
// derived from the controllers (permissions.ts), per install: the base (metacontroller/, whose
// role is manifests/rbac/metacontroller.yaml) and each GPUCellPool component
// (metacontroller/gpucellpool/<provisioner>/, which brings its own role). Statically, each role
// grants exactly what its install needs. The RBAC of manifests/ and of every component is applied
// to the local control plane, and the apiserver (SubjectAccessReviews, as
// `kubectl auth can-i --as=<Metacontroller's ServiceAccount>` sends them, and
// `kubectl auth can-i --list`) must answer yes to each verb the whole install needs and no to what
// KubeCell never needs. The hook server's own role is the webhook's read-only lookups.
//
// Metacontroller itself does not run here (its Go module is refused by the proxy): what is
// checked is what the apiserver would allow it, not a reconcile.
import { expect } from 'chai';
import { parseAllDocuments, stringify } from 'yaml';
import { isJsonObject } from '../../hooks/json/json.js';
import type { ControlPlane } from '../../harness/cluster/control-plane.js';
import { installKubeCellApi, kubectlOk } from '../../harness/cluster/kubecell.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from '../cluster/shared-cluster.js';
import {
  describePermission,
  derivePermissions,
  grantedPermissions,
  type ApiResource,
  type Discovery,
  type Permission,
  type PermissionSet,
} from './permissions.js';
import {
  GPUCELLPOOL_COMPONENTS,
  METACONTROLLER_BASE,
  findObject,
  readControllers,
  readYamlDocuments,
  type Json,
} from './support.js';

const METACONTROLLER = 'system:serviceaccount:metacontroller:metacontroller';
const HOOK_SERVER = 'system:serviceaccount:kubecell-system:kubecell-hooks';
const RBAC_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];

interface Check {
  verb: string;
  /** `pods`, `deployments.apps`, `cells.kubecell.io` */
  resource: string;
  subresource?: string;
  /** Absent: every namespace (`-A`). */
  namespace?: string;
  why: string;
}

function checkOf({ group, resource, verb }: Omit<Permission, 'why'>, why: string): Check {
  const [plural, subresource] = resource.split('/') as [string, string | undefined];
  return {
    verb,
    resource: group === '' ? plural : `${plural}.${group}`,
    ...(subresource ? { subresource } : {}),
    why,
  };
}

function describeCheck(check: Check): string {
  return (
    `${check.verb} ${check.resource}${check.subresource ? `/${check.subresource}` : ''}` +
    (check.namespace ? ` -n ${check.namespace}` : ' (all namespaces)')
  );
}

/**
 * Whether the apiserver allows `user` a check: a SubjectAccessReview, which is what
 * `kubectl auth can-i --as` sends, written out so that a resource of a CRD this test apiserver
 * does not serve (KubeVirt's, a Cluster API provider's) is asked about by its exact group and
 * name instead of failing kubectl's discovery lookup. The ServiceAccount's groups are included,
 * as the apiserver would add them.
 */
async function canI(cluster: ControlPlane, user: string, check: Check): Promise<boolean> {
  const [plural = '', ...group] = check.resource.split('.');
  const namespace = /^system:serviceaccount:([^:]+):/.exec(user)?.[1];
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user,
      groups: [
        'system:authenticated',
        ...(namespace ? ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] : []),
      ],
      resourceAttributes: {
        verb: check.verb,
        group: group.join('.'),
        resource: plural,
        ...(check.subresource ? { subresource: check.subresource } : {}),
        ...(check.namespace ? { namespace: check.namespace } : {}),
      },
    },
  };
  const answer = await kubectlOk(
    cluster,
    ['create', '-o', 'json', '-f', '-'],
    JSON.stringify(review),
  );
  return (JSON.parse(answer) as { status?: { allowed?: boolean } }).status?.allowed === true;
}

/** Every check's answer, a few at a time. */
async function answers(
  cluster: ControlPlane,
  user: string,
  checks: readonly Check[],
): Promise<boolean[]> {
  const results: boolean[] = new Array<boolean>(checks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < checks.length) {
      const index = next++;
      results[index] = await canI(cluster, user, checks[index] as Check);
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  return results;
}

function clusterDiscovery(cluster: ControlPlane): Discovery {
  const cache = new Map<string, Promise<ApiResource[]>>();
  return (apiVersion) => {
    let served = cache.get(apiVersion);
    if (served === undefined) {
      const url = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      served = kubectlOk(cluster, ['get', '--raw', url]).then(
        (text) => (JSON.parse(text) as { resources: ApiResource[] }).resources,
      );
      cache.set(apiVersion, served);
    }
    return served;
  };
}

/** What the system grants every authenticated user (system:basic-user, discovery). */
const GRANTED_TO_EVERYONE = new Set([
  'selfsubjectaccessreviews.authorization.k8s.io',
  'selfsubjectrulesreviews.authorization.k8s.io',
  'selfsubjectreviews.authentication.k8s.io',
]);

/**
 * What Metacontroller must never be able to do for KubeCell, whatever the controllers add:
 * each names the reason. The derived set must not contain any of them (a controller that
 * needs one is a design change, and this list says so).
 */
const NEVER: Check[] = [
  { verb: 'create', resource: 'pods', subresource: 'eviction', why: 'DESIGN §5: never evicts' },
  { verb: 'create', resource: 'clusterrolebindings.rbac.authorization.k8s.io', why: 'no RBAC' },
  { verb: 'create', resource: 'rolebindings.rbac.authorization.k8s.io', why: 'no RBAC' },
  { verb: 'escalate', resource: 'clusterroles.rbac.authorization.k8s.io', why: 'no RBAC' },
  { verb: 'bind', resource: 'clusterroles.rbac.authorization.k8s.io', why: 'no RBAC' },
  { verb: 'create', resource: 'nodes', why: 'the kubelet registers Nodes; pools adopt them' },
  { verb: 'update', resource: 'nodes', subresource: 'status', why: "the kubelet's" },
  { verb: 'patch', resource: 'nodes', subresource: 'status', why: "the kubelet's" },
  { verb: 'delete', resource: 'namespaces', why: "tenants' namespaces are not KubeCell's" },
  { verb: 'create', resource: 'namespaces', why: 'host namespaces are the platform team’s' },
  {
    verb: 'create',
    resource: 'deployments.apps',
    namespace: 'kube-system',
    why: 'only reads the provider baseline',
  },
  {
    verb: 'update',
    resource: 'deployments.apps',
    namespace: 'kube-system',
    why: 'only reads the provider baseline',
  },
  {
    verb: 'delete',
    resource: 'daemonsets.apps',
    namespace: 'kube-system',
    why: 'only reads the provider baseline',
  },
  {
    verb: 'create',
    resource: 'pods',
    namespace: 'kube-system',
    why: 'KubeCell creates no pods',
  },
  { verb: 'create', resource: 'pods', subresource: 'exec', why: 'never execs' },
  {
    verb: 'create',
    resource: 'managedclusters.cluster.open-cluster-management.io',
    why: "OCM's object, only read",
  },
  {
    verb: 'update',
    resource: 'managedclusters.cluster.open-cluster-management.io',
    why: "OCM's object, only read",
  },
  {
    verb: 'delete',
    resource: 'managedclusters.cluster.open-cluster-management.io',
    why: 'a cluster leaves through OCM',
  },
  {
    verb: 'update',
    resource: 'managedclusters.cluster.open-cluster-management.io',
    subresource: 'status',
    why: "OCM's registration reports it",
  },
  {
    verb: 'update',
    resource: 'manifestworks.work.open-cluster-management.io',
    subresource: 'status',
    why: "OCM's work agent reports it",
  },
  {
    verb: 'delete',
    resource: 'customresourcedefinitions.apiextensions.k8s.io',
    why: 'only reads the k3k CRDs',
  },
  {
    verb: 'create',
    resource: 'serviceaccounts',
    subresource: 'token',
    why: 'issues no tokens',
  },
  { verb: 'impersonate', resource: 'serviceaccounts', why: 'impersonates no one' },
];

/** The role each install brings, and the controllers it is for. */
interface InstallRole {
  /** The kustomization of Metacontroller objects (metacontroller/, or a component). */
  dir: string;
  role: string;
  derived: PermissionSet;
  granted: PermissionSet;
}

function documentsOf(text: string): Json[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as unknown)
    .filter(isJsonObject);
}

const GPUCELLPOOL_ONLY = [
  'gpucellpools',
  'virtualmachines',
  'machines',
  'resourceclaims',
  'resourceclaimtemplates',
  'kubeadmconfigtemplates',
  'kubeadmconfigs',
  'kubevirtmachinetemplates',
  'kubevirtmachines',
];

describe('RBAC: least privilege on a real apiserver', function () {
  let cluster: ControlPlane;
  let derived: PermissionSet;
  let installs: InstallRole[];
  let rbacObjects: Json[];

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
    const discovery = clusterDiscovery(cluster);
    derived = await derivePermissions(discovery);

    const manifests = documentsOf(await kubectlOk(cluster, ['kustomize', 'manifests']));
    rbacObjects = manifests.filter((object) => RBAC_KINDS.includes(String(object.kind)));
    installs = [
      {
        dir: METACONTROLLER_BASE,
        role: 'kubecell-metacontroller',
        derived: await derivePermissions(discovery, METACONTROLLER_BASE),
        granted: grantedPermissions(
          findObject(rbacObjects, 'ClusterRole', 'kubecell-metacontroller'),
        ),
      },
    ];
    for (const dir of GPUCELLPOOL_COMPONENTS) {
      const built = documentsOf(await kubectlOk(cluster, ['kustomize', dir]));
      const rbac = built.filter((object) => RBAC_KINDS.includes(String(object.kind)));
      const role = `kubecell-metacontroller-gpucellpool-${dir.split('/').pop() ?? ''}`;
      installs.push({
        dir,
        role,
        derived: await derivePermissions(discovery, dir),
        granted: grantedPermissions(findObject(rbac, 'ClusterRole', role)),
      });
      rbacObjects.push(...rbac);
    }
    // Only the RBAC objects: the webhook configurations (failurePolicy Fail) would refuse every
    // KubeCell object of the other tests, since no hook server answers behind their Service.
    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      rbacObjects.map((object) => stringify(object)).join('---\n'),
    );
  });

  after(async function () {
    this.timeout(30_000);
    for (const object of rbacObjects ?? []) {
      const name = String((object.metadata as Json).name);
      await cluster?.kubectl(['delete', String(object.kind).toLowerCase(), name, '--wait=false']);
    }
  });

  describe('each install brings the role it needs, and nothing more', function () {
    it('one role per install: the base and each GPUCellPool component', function () {
      expect(installs.map((install) => install.dir)).to.deep.equal([
        METACONTROLLER_BASE,
        ...GPUCELLPOOL_COMPONENTS,
      ]);
      for (const install of installs) {
        expect(readControllers(install.dir).length, install.dir).to.be.greaterThan(0);
        // Guard against a derivation that silently found nothing.
        expect(install.derived.byResource().length, install.dir).to.be.greaterThan(5);
      }
    });

    it('each role grants every permission its controllers need', function () {
      const missing = installs.flatMap((install) =>
        install.derived
          .list()
          .filter(({ group, resource, verb }) => !install.granted.has(group, resource, verb))
          .map(
            (entry) => `${install.role}: ${describePermission(entry)}   <- ${entry.why.join('; ')}`,
          ),
      );
      expect(missing, `missing:\n${missing.join('\n')}`).to.deep.equal([]);
    });

    it('every rule of each role is needed by its own controllers', function () {
      const unused = installs.flatMap((install) =>
        install.granted
          .list()
          .filter(({ group, resource, verb }) => !install.derived.has(group, resource, verb))
          .map((entry) => `${install.role}: ${describePermission(entry)}`),
      );
      expect(unused, `granted but not needed:\n${unused.join('\n')}`).to.deep.equal([]);
    });

    it('the base grants nothing on GPUCellPools, their machines, claims or templates, or Node writes', function () {
      const base = installs[0] as InstallRole;
      const gpu = base.granted
        .list()
        .filter(
          ({ resource, verb }) =>
            GPUCELLPOOL_ONLY.includes(resource.split('/')[0] as string) ||
            (resource === 'nodes' && !['get', 'list', 'watch'].includes(verb)),
        )
        .map(describePermission);
      expect(gpu).to.deep.equal([]);
      expect(readControllers(METACONTROLLER_BASE).map((c) => c.name)).to.not.include.members([
        'kubecell-gpucellpool-kubevirt',
        'kubecell-gpucellpool-cluster-api',
      ]);
    });

    it('each component role grants nothing on the other provisioner’s kinds', function () {
      const [, kubevirt, clusterApi] = installs as [InstallRole, InstallRole, InstallRole];
      const of = (install: InstallRole, match: (group: string) => boolean) =>
        install.granted
          .list()
          .filter(({ group }) => match(group))
          .map(describePermission);
      expect(of(kubevirt, (group) => group.endsWith('cluster.x-k8s.io'))).to.deep.equal([]);
      expect(of(clusterApi, (group) => group === 'kubevirt.io')).to.deep.equal([]);
    });
  });

  describe('Metacontroller’s ServiceAccount, with the base and every component installed', function () {
    it('the derived set covers every controller of metacontroller/ and its components', function () {
      const resources = derived
        .byResource()
        .map(
          ({ group, resource, verbs }) =>
            `${describePermission({ group, resource, verb: '' }).trim()}: ${verbs.join(', ')}`,
        );
      expect(readControllers().length).to.be.greaterThan(0);
      // Guard against a derivation that silently found nothing.
      expect(resources.length, resources.join('\n')).to.be.greaterThan(10);
    });

    it('the apiserver allows every derived permission, in every namespace', async function () {
      this.timeout(120_000);
      const checks = derived.list().map((entry) => checkOf(entry, entry.why.join('; ')));
      const results = await answers(cluster, METACONTROLLER, checks);
      const denied = checks.filter((_, index) => !results[index]).map(describeCheck);
      expect(denied, `denied:\n${denied.join('\n')}`).to.deep.equal([]);
    });

    it('the apiserver grants it nothing beyond the derived set and Metacontroller’s own role (kubectl auth can-i --list)', async function () {
      this.timeout(30_000);
      // Metacontroller's own needs (its controllers and ControllerRevisions), which a platform
      // may grant with manifests/metacontroller-core instead of upstream's wildcard role; the
      // shared cluster binds it.
      const core = grantedPermissions(
        findObject(
          readYamlDocuments('manifests/metacontroller-core/rbac.yaml'),
          'ClusterRole',
          'kubecell-metacontroller-core',
        ),
      );
      const text = await kubectlOk(cluster, ['auth', 'can-i', '--list', `--as=${METACONTROLLER}`]);
      const extra: string[] = [];
      let parsed = 0;
      for (const line of text.split('\n').slice(1)) {
        const match = /^(\S*)\s+\[(.*?)\]\s+\[(.*?)\]\s+\[(.*?)\]\s*$/.exec(line);
        if (!match) continue;
        const [, qualified = '', , , verbs = ''] = match;
        if (qualified === '' || GRANTED_TO_EVERYONE.has(qualified)) continue;
        parsed++;
        // `cells.kubecell.io/status`, `pods`, `namespaces/finalizers`
        const [name = '', subresource] = qualified.split('/');
        const dot = name.indexOf('.');
        const plural = dot === -1 ? name : name.slice(0, dot);
        const group = dot === -1 ? '' : name.slice(dot + 1);
        const resource = subresource ? `${plural}/${subresource}` : plural;
        for (const verb of verbs.split(' ').filter(Boolean)) {
          if (derived.has(group, resource, verb) || core.has(group, resource, verb)) continue;
          extra.push(`${verb} ${qualified}`);
        }
      }
      expect(parsed, text).to.be.at.least(derived.byResource().length);
      expect(extra, `granted beyond the derived set:\n${extra.join('\n')}`).to.deep.equal([]);
    });

    it('the apiserver denies what KubeCell never needs', async function () {
      this.timeout(60_000);
      const conflicting = NEVER.filter((check) => {
        const [plural = '', ...rest] = check.resource.split('.');
        const resource = check.subresource ? `${plural}/${check.subresource}` : plural;
        return derived.has(rest.join('.'), resource, check.verb);
      }).map(describeCheck);
      expect(conflicting, `a controller now needs what was never to be granted`).to.deep.equal([]);
      const results = await answers(cluster, METACONTROLLER, NEVER);
      const allowed = NEVER.filter((_, index) => results[index]).map(
        (check) => `${describeCheck(check)} (${check.why})`,
      );
      expect(allowed, `allowed:\n${allowed.join('\n')}`).to.deep.equal([]);
    });

    it('the apiserver denies every write to what KubeCell only reads', async function () {
      this.timeout(60_000);
      const readOnly = derived
        .byResource()
        .filter(({ verbs }) => !verbs.some((verb) => ['create', 'update', 'delete'].includes(verb)))
        .filter(({ resource }) => resource !== 'events');
      expect(readOnly.length).to.be.greaterThan(0);
      const checks = readOnly.flatMap(({ group, resource }) =>
        ['create', 'update', 'patch', 'delete'].map((verb) =>
          checkOf({ group, resource, verb }, 'related only'),
        ),
      );
      const results = await answers(cluster, METACONTROLLER, checks);
      const allowed = checks.filter((_, index) => results[index]).map(describeCheck);
      expect(allowed, `allowed:\n${allowed.join('\n')}`).to.deep.equal([]);
    });

    it('grants nodes: delete and never pods/eviction (DESIGN §5)', async function () {
      this.timeout(30_000);
      // GPU cell Nodes are children of their GPUCellPool: stale and retired cells' Nodes are
      // deleted on always-on paths. Nothing is ever evicted.
      const ownsNodes = readControllers().some((controller) =>
        controller.children.some(
          (child) => child.apiVersion === 'v1' && child.resource === 'nodes',
        ),
      );
      expect(ownsNodes, 'a GPUCellPool component owns Nodes').to.equal(true);
      expect(derived.has('', 'nodes', 'delete')).to.equal(true);
      expect(derived.has('', 'pods/eviction', 'create')).to.equal(false);
      const [deleteNodes, evict] = await answers(cluster, METACONTROLLER, [
        { verb: 'delete', resource: 'nodes', why: '' },
        { verb: 'create', resource: 'pods', subresource: 'eviction', why: '' },
      ]);
      expect(deleteNodes).to.equal(true);
      expect(evict).to.equal(false);
    });
  });

  describe('kubecell-webhook-lookups (the hook server’s ServiceAccount)', function () {
    it('is the only role bound to the hook server', function () {
      const bindings = rbacObjects.filter((object) =>
        ((object.subjects ?? []) as Json[]).some(
          (subject) =>
            subject.kind === 'ServiceAccount' &&
            subject.name === 'kubecell-hooks' &&
            subject.namespace === 'kubecell-system',
        ),
      );
      expect(bindings.map((binding) => (binding.roleRef as Json).name)).to.deep.equal([
        'kubecell-webhook-lookups',
      ]);
    });

    it('allows the lookups and nothing that writes or reads secrets', async function () {
      this.timeout(60_000);
      const allowed: Check[] = [
        { verb: 'get', resource: 'namespaces', why: 'host-namespace label' },
        { verb: 'list', resource: 'virtualclusters.kubecell.io', why: 'one per namespace' },
        // The watch cache of the webhook's lookups (hooks/admission/cached-lookup.ts).
        ...['namespaces', 'cells.kubecell.io', 'virtualnodeclasses.kubecell.io'].map(
          (resource) => ({ verb: 'list', resource, why: 'watch cache' }),
        ),
        ...[
          'namespaces',
          'cells.kubecell.io',
          'virtualnodeclasses.kubecell.io',
          'virtualclusters.kubecell.io',
        ].map((resource) => ({ verb: 'watch', resource, why: 'watch cache' })),
      ];
      const denied: Check[] = [
        { verb: 'list', resource: 'secrets', why: '' },
        { verb: 'get', resource: 'secrets', namespace: 'kubecell-system', why: '' },
        { verb: 'create', resource: 'virtualclusters.kubecell.io', namespace: 'tenant-a', why: '' },
        { verb: 'update', resource: 'cells.kubecell.io', namespace: 'kubecell-system', why: '' },
        { verb: 'update', resource: 'namespaces', why: '' },
        { verb: 'list', resource: 'pods', why: '' },
        { verb: 'watch', resource: 'secrets', why: '' },
        { verb: 'watch', resource: 'gpucellpools.kubecell.io', why: '' },
        { verb: 'create', resource: 'pods', subresource: 'eviction', why: '' },
      ];
      const results = await answers(cluster, HOOK_SERVER, [...allowed, ...denied]);
      expect(
        allowed.filter((_, index) => !results[index]).map(describeCheck),
        'denied',
      ).to.deep.equal([]);
      expect(
        denied.filter((_, index) => results[allowed.length + index]).map(describeCheck),
        'allowed',
      ).to.deep.equal([]);
    });
  });
});
