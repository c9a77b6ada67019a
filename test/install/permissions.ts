// What Metacontroller must be allowed to do to run KubeCell's controllers, derived from the
// controllers themselves rather than kept by hand:
//
// - each controller of one `kubectl apply -k` of metacontroller/ (the base, or a GPUCellPool
//   component): its parents and its childResources / attachments;
// - the related resources its customize hook asks for, asked of the real hook server
//   (productApp) with every sample of the parent's kind;
// - Metacontroller's own behaviour towards them (DESIGN.md §6 and Metacontroller's source,
//   pkg/controller/{composite,decorator}, pkg/dynamic/clientset):
//   * parents: informers (list, watch), uncached reads (get), the finalizer and, for
//     decorators, labels and annotations written with update (update; not for a decorator that
//     answers attachments only and has no finalize hook, ATTACHMENTS_ONLY); the status written
//     through the status subresource (update on <resource>/status) for KubeCell's own kinds
//     (a decorator's hook over a foreign kind returns no status); children and attachments
//     carry an ownerReference with blockOwnerDeletion, which the
//     OwnerReferencesPermissionEnforcement admission plugin allows only with update on the
//     parent's finalizers subresource;
//   * children and attachments: get, list, watch, create, update, patch (server-side apply,
//     adoption), delete; no create for children that are registered by others and adopted
//     (Nodes);
//   * objects a sync hook returns outside childResources (GPUCellPool's Cluster API template
//     clones, found as related objects selected by the pool's own label): create, patch;
//     the customize hook is asked without API discovery, so it names every kind a sample uses
//     (hooks/gpucellpool/served-kinds.ts: a hook server without credentials asks for them all);
//   * related objects: get, list, watch, cluster-wide (Metacontroller's informers are);
//   * events: create, patch (the SyncError events it records on parents).
import request from 'supertest';
import { productApp } from '../../hooks/controllers/testing.js';
import {
  METACONTROLLER_INSTALLS,
  groupOf,
  kustomizationResources,
  readControllers,
  readSamples,
  readYamlDocuments,
  selectorMatches,
  type ControllerObject,
  type Json,
} from './support.js';

export const CHILD_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
export const RELATED_VERBS = ['get', 'list', 'watch'];
export const PARENT_VERBS = ['get', 'list', 'watch', 'update'];
export const EVENT_VERBS = ['create', 'patch'];
/**
 * Children that someone else creates and the controller only adopts, keeps or deletes: no
 * `create`. A GPUCellPool's Nodes are registered by each cell's kubelet with the pool's
 * controller-uid label (metacontroller/gpucellpool/<provisioner>/controller.yaml); Metacontroller
 * must never make one.
 */
export const ADOPTED_ONLY = new Map([['|nodes', 'registered by the kubelet, adopted by label']]);
/** Server-side apply of an object that may not exist yet: patch, and create. */
export const OWN_OBJECT_VERBS = ['create', 'patch'];
const POOL_LABEL = 'kubecell.io/pool';
/**
 * Decorators that never write their parent: their hooks answer attachments only (no labels,
 * annotations or status) and they have no finalize hook, so Metacontroller adds no finalizer and
 * never calls update on the parent (`syncParentObject`, pkg/controller/decorator/controller.go:
 * it updates only when labels, annotations or status changed, or to remove its finalizer).
 */
export const ATTACHMENTS_ONLY = new Map([
  [
    'kubecell-delivery',
    "OCM's ManagedCluster: attachments only (hooks/delivery/sync.ts), no finalize hook",
  ],
  [
    'kubecell-placement-index',
    'its source ConfigMap: the index attachment only (hooks/placement-index/sync.ts), no finalize hook',
  ],
]);
/**
 * Parent kinds no user applies, so samples/ holds none: OCM's registration creates each
 * ManagedCluster when a cluster joins. Their customize hook is asked for the ManagedClusters the
 * sample Cells bind (spec.managedClusterRef.name), as the cluster would hold them.
 */
const REGISTERED_PARENTS: Record<string, (samples: Json[]) => Json[]> = {
  'cluster.open-cluster-management.io|ManagedCluster': (samples) =>
    [
      ...new Set(
        samples
          .filter((object) => object.kind === 'Cell')
          .map((cell) => String(((cell.spec as Json).managedClusterRef as Json).name)),
      ),
    ].map((name) => ({
      apiVersion: 'cluster.open-cluster-management.io/v1',
      kind: 'ManagedCluster',
      metadata: { name },
      spec: { hubAcceptsClient: true },
    })),
};

/** A resource as the discovery API describes it. */
export interface ApiResource {
  /** Plural name, with `/subresource` for subresources. */
  name: string;
  kind: string;
  namespaced: boolean;
}

/** The resources of one apiVersion (`v1`, `group/version`), as the apiserver serves them. */
export type Discovery = (apiVersion: string) => Promise<ApiResource[]>;

export interface Permission {
  group: string;
  /** `resource` or `resource/subresource`. */
  resource: string;
  verb: string;
  /** Why it is needed: one line per controller and role (parent, child, related, ...). */
  why: string[];
}

export function permissionKey(group: string, resource: string, verb: string): string {
  return `${group}|${resource}|${verb}`;
}

/** `pods get`, `cells.kubecell.io/status update`: how the tests name a permission. */
export function describePermission({ group, resource, verb }: Omit<Permission, 'why'>): string {
  const [plural, subresource] = resource.split('/');
  const qualified = group === '' ? plural : `${plural}.${group}`;
  return `${verb} ${qualified}${subresource ? `/${subresource}` : ''}`;
}

export class PermissionSet {
  readonly #entries = new Map<string, Permission>();
  /**
   * Children and related resources the test apiserver does not serve (a foreign CRD that is not
   * installed there): their permissions are derived all the same, RBAC names resources by
   * string, but nothing checked that the name is one an apiserver serves.
   */
  readonly notServed = new Set<string>();

  add(group: string, resource: string, verbs: readonly string[], why: string): void {
    for (const verb of verbs) {
      const key = permissionKey(group, resource, verb);
      const entry = this.#entries.get(key) ?? { group, resource, verb, why: [] };
      if (!entry.why.includes(why)) entry.why.push(why);
      this.#entries.set(key, entry);
    }
  }

  has(group: string, resource: string, verb: string): boolean {
    return this.#entries.has(permissionKey(group, resource, verb));
  }

  list(): Permission[] {
    return [...this.#entries.values()].sort((a, b) =>
      permissionKey(a.group, a.resource, a.verb).localeCompare(
        permissionKey(b.group, b.resource, b.verb),
      ),
    );
  }

  /** Resources (with group) and the verbs needed on each, for a readable listing. */
  byResource(): Array<{ group: string; resource: string; verbs: string[] }> {
    const grouped = new Map<string, { group: string; resource: string; verbs: string[] }>();
    for (const { group, resource, verb } of this.list()) {
      const key = `${group}|${resource}`;
      const entry = grouped.get(key) ?? { group, resource, verbs: [] };
      entry.verbs.push(verb);
      grouped.set(key, entry);
    }
    return [...grouped.values()];
  }
}

async function resourceOf(
  discovery: Discovery,
  apiVersion: string,
  resource: string,
): Promise<{ kind: string; subresources: string[] } | undefined> {
  let served: ApiResource[];
  try {
    served = await discovery(apiVersion);
  } catch {
    return undefined; // the group/version is not served at all
  }
  const main = served.find((entry) => entry.name === resource);
  if (main === undefined) return undefined;
  const subresources = served
    .filter((entry) => entry.name.startsWith(`${resource}/`))
    .map((entry) => entry.name.slice(resource.length + 1));
  return { kind: main.kind, subresources };
}

interface RelatedRule {
  apiVersion: string;
  resource: string;
  labelSelector?: { matchLabels?: Record<string, string> };
}

/** The related-resource rules a controller's customize hook answers for one parent. */
async function askCustomize(
  app: Parameters<typeof request>[0],
  controller: ControllerObject,
  parent: Json,
  label: string,
): Promise<RelatedRule[]> {
  const response = await request(app)
    .post(`/hooks/${controller.hookName}/customize`)
    .send({ controller: controller.object, parent });
  if (response.status !== 200) {
    throw new Error(
      `${controller.name} customize for ${label} answered ${response.status}: ${JSON.stringify(response.body)}`,
    );
  }
  return ((response.body as { relatedResources?: RelatedRule[] }).relatedResources ??
    []) as RelatedRule[];
}

/**
 * Everything Metacontroller needs for the controllers the kustomizations at `dirs` build (by
 * default the base and every GPUCellPool component).
 */
export async function derivePermissions(
  discovery: Discovery,
  dirs: string | readonly string[] = METACONTROLLER_INSTALLS,
  now = new Date('2026-11-30T00:00:00Z'),
): Promise<PermissionSet> {
  const permissions = new PermissionSet();
  const { app } = await productApp(now, {});
  // The parents a user applies (samples/) and those the installs ship themselves (the placement
  // index's source ConfigMap, metacontroller/placement-index-source.yaml).
  const shipped = (typeof dirs === 'string' ? [dirs] : dirs).flatMap((dir) =>
    kustomizationResources(dir).flatMap((file) =>
      readYamlDocuments(file)
        .filter((object) => !String(object.apiVersion).startsWith('metacontroller.k8s.io/'))
        .map((object) => ({ file, object })),
    ),
  );
  const samples = [...readSamples(), ...shipped];
  const controllers = readControllers(dirs);
  for (const controller of controllers) {
    const who = `${controller.name} (${controller.file})`;
    const hasChildren = controller.children.length > 0;
    for (const parent of controller.parents) {
      const group = groupOf(parent.apiVersion);
      const served = await resourceOf(discovery, parent.apiVersion, parent.resource);
      if (served === undefined) {
        throw new Error(
          `${who}: the apiserver serves no ${parent.resource} in ${parent.apiVersion}`,
        );
      }
      const { kind, subresources } = served;
      const writesParent =
        controller.kind === 'CompositeController' ||
        controller.hooks.finalize !== undefined ||
        !ATTACHMENTS_ONLY.has(controller.name);
      permissions.add(
        group,
        parent.resource,
        writesParent ? PARENT_VERBS : PARENT_VERBS.filter((verb) => verb !== 'update'),
        `${who}: parent`,
      );
      const writesStatus = controller.kind === 'CompositeController' || group === 'kubecell.io';
      if (writesStatus && subresources.includes('status')) {
        permissions.add(group, `${parent.resource}/status`, ['update'], `${who}: parent status`);
      }
      if (hasChildren) {
        permissions.add(
          group,
          `${parent.resource}/finalizers`,
          ['update'],
          `${who}: children block the parent's deletion (ownerReferences.blockOwnerDeletion)`,
        );
      }

      if (controller.hooks.customize === undefined) continue;
      const registered = REGISTERED_PARENTS[`${group}|${kind}`];
      const candidates = registered
        ? registered(samples.map(({ object }) => object)).map((object) => ({
            file: 'registered by OCM, bound by a sample Cell',
            object,
          }))
        : samples;
      const ofKind = candidates.filter(
        ({ object }) =>
          groupOf(String(object.apiVersion)) === group &&
          object.kind === kind &&
          selectorMatches(parent.labelSelector, object),
      );
      if (ofKind.length === 0) {
        throw new Error(
          `${who} has a customize hook but samples/ holds no ${kind} it selects: its related ` +
            'resources cannot be derived; add a sample',
        );
      }
      for (const { file, object } of ofKind) {
        const label = `${kind} ${String((object.metadata as Json).name)} (${file})`;
        const parentName = String((object.metadata as Json).name);
        for (const rule of await askCustomize(app, controller, object, label)) {
          // Objects a controller selects by its own pool label are ones its sync hook returns
          // although they are no childResource (GPUCellPool's Cluster API template clones,
          // metacontroller/gpucellpool/cluster-api/controller.yaml): Metacontroller creates them
          // by server-side apply.
          if (rule.labelSelector?.matchLabels?.[POOL_LABEL] === parentName) {
            permissions.add(
              groupOf(rule.apiVersion),
              rule.resource,
              OWN_OBJECT_VERBS,
              `${who}: created from the sync answer, outside childResources`,
            );
          }
          if ((await resourceOf(discovery, rule.apiVersion, rule.resource)) === undefined) {
            permissions.notServed.add(`${rule.resource} ${rule.apiVersion}`);
          }
          permissions.add(
            groupOf(rule.apiVersion),
            rule.resource,
            RELATED_VERBS,
            `${who}: related (customize)`,
          );
        }
      }
    }
    for (const child of controller.children) {
      if ((await resourceOf(discovery, child.apiVersion, child.resource)) === undefined) {
        permissions.notServed.add(`${child.resource} ${child.apiVersion}`);
      }
      const adopted = ADOPTED_ONLY.get(`${groupOf(child.apiVersion)}|${child.resource}`);
      permissions.add(
        groupOf(child.apiVersion),
        child.resource,
        adopted === undefined ? CHILD_VERBS : CHILD_VERBS.filter((verb) => verb !== 'create'),
        `${who}: ${controller.kind === 'CompositeController' ? 'child' : 'attachment'}`,
      );
    }
  }
  if (controllers.length > 0) {
    permissions.add('', 'events', EVENT_VERBS, 'Metacontroller: events on the parents');
  }
  return permissions;
}

/** A ClusterRole's rules as permissions; wildcards and resourceNames are refused. */
export function grantedPermissions(role: Json): PermissionSet {
  const granted = new PermissionSet();
  for (const rule of (role.rules ?? []) as Json[]) {
    if (rule.nonResourceURLs !== undefined) throw new Error('nonResourceURLs are not expected');
    if (rule.resourceNames !== undefined) throw new Error('resourceNames are not expected');
    for (const group of rule.apiGroups as string[]) {
      for (const resource of rule.resources as string[]) {
        const verbs = rule.verbs as string[];
        if ([group, resource, ...verbs].includes('*')) {
          throw new Error(`wildcard in rule ${JSON.stringify(rule)}`);
        }
        granted.add(group, resource, verbs, 'granted');
      }
    }
  }
  return granted;
}
