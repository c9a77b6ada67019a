// The cell agent's grants against the calls it makes, for hooks/delivery/agent-rbac.test.ts (a
// cluster in memory) and the remote-Cell e2e (a real managed cluster): each call the agent makes
// is recorded as the apiserver's RBAC authorizer sees it, judged against the delivered Roles and
// ClusterRole as that authorizer judges it, and every granted verb on every granted name must be
// used by some call.
import type { AgentConfig } from '../../hooks/agent/config.js';
import type { AgentApi } from '../../hooks/agent/kube-api.js';
import { runPass, type PassSummary } from '../../hooks/agent/pass.js';
import { REPORT_HEARTBEAT_SECONDS } from '../../hooks/agent/reports.js';
import type { PolicyRule } from '../../hooks/delivery/agent-rbac.js';
import type { KubernetesObject } from '../../hooks/metacontroller/protocol.js';

/** One API call as RBAC sees it (k8s.io/apiserver pkg/endpoints/request/requestinfo.go). */
export interface Access {
  verb: string;
  group: string;
  resource: string;
  /** Absent for a cluster-scoped resource or a request across all namespaces. */
  namespace?: string;
  /** Absent for a list or a create: RBAC sees no name on a request to a collection. */
  name?: string;
}

/** A rule of a Role (in `namespace`) or of a ClusterRole bound cluster-wide (no namespace). */
export interface Grant {
  namespace?: string;
  rule: PolicyRule;
}

/** `/api/v1/...` or `/apis/<group>/<version>/...`, namespaced or not, a collection or an object. */
export function accessOf(verb: string, path: string): Access {
  const segments = (path.split('?')[0] ?? '').split('/').filter((s) => s !== '');
  const [group, rest] =
    segments[0] === 'api' ? ['', segments.slice(2)] : [segments[1] ?? '', segments.slice(3)];
  const namespaced = rest[0] === 'namespaces' && rest.length >= 3;
  const [resource = '', name] = namespaced ? rest.slice(2) : rest;
  return {
    verb,
    group,
    resource,
    ...(namespaced ? { namespace: decodeURIComponent(rest[1]!) } : {}),
    ...(name === undefined ? {} : { name: decodeURIComponent(name) }),
  };
}

/** `api`, recording each call in `calls` before making it. */
export function recording(api: AgentApi, calls: Access[]): AgentApi {
  return {
    list: (path) => (calls.push(accessOf('list', path)), api.list(path)),
    get: (path) => (calls.push(accessOf('get', path)), api.get(path)),
    create: (path, object) => (calls.push(accessOf('create', path)), api.create(path, object)),
    update: (path, object) => (calls.push(accessOf('update', path)), api.update(path, object)),
  };
}

/**
 * RBAC's match (k8s.io/kubernetes v1.35.4 plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows,
 * pkg/apis/rbac/v1/evaluation_helpers.go): a Role's rule only in its namespace; resourceNames,
 * when set, only for a request that names one of them.
 */
export function allows({ namespace, rule }: Grant, access: Access): boolean {
  const names = rule.resourceNames ?? [];
  return (
    (namespace === undefined || namespace === access.namespace) &&
    rule.apiGroups.includes(access.group) &&
    rule.resources.includes(access.resource) &&
    rule.verbs.includes(access.verb) &&
    (names.length === 0 || (access.name !== undefined && names.includes(access.name)))
  );
}

/** The grants of these Roles and ClusterRoles (as the work delivers them, or as read back). */
export function grantsOf(roles: readonly KubernetesObject[]): Grant[] {
  return roles.flatMap((role) => {
    const rules = ((role as { rules?: PolicyRule[] }).rules ?? []).map((rule) => ({
      apiGroups: rule.apiGroups,
      resources: rule.resources,
      verbs: rule.verbs,
      ...(rule.resourceNames ? { resourceNames: rule.resourceNames } : {}),
    }));
    const namespace = role.kind === 'Role' ? role.metadata.namespace : undefined;
    return rules.map((rule) => (namespace === undefined ? { rule } : { namespace, rule }));
  });
}

const describe = (access: Access): string =>
  `${access.verb} ${access.group}/${access.resource}` +
  (access.namespace === undefined ? '' : ` in ${access.namespace}`) +
  (access.name === undefined ? '' : ` named ${access.name}`);

/** The calls no grant allows, described. */
export function deniedCalls(calls: readonly Access[], grants: readonly Grant[]): string[] {
  return calls.filter((call) => !grants.some((grant) => allows(grant, call))).map(describe);
}

/** Each granted (verb, resource, name) that no call used, described. */
export function unusedGrants(calls: readonly Access[], grants: readonly Grant[]): string[] {
  return grants.flatMap((grant) => {
    const { rule, namespace } = grant;
    const names: (string | undefined)[] = rule.resourceNames ?? [undefined];
    return rule.apiGroups.flatMap((group) =>
      rule.resources.flatMap((resource) =>
        rule.verbs.flatMap((verb) =>
          names
            .map((name): Access => ({
              verb,
              group,
              resource,
              ...(namespace === undefined ? {} : { namespace }),
              ...(name === undefined ? {} : { name }),
            }))
            .filter(
              (wanted) =>
                !calls.some(
                  (call) =>
                    allows(grant, call) &&
                    call.verb === wanted.verb &&
                    call.resource === wanted.resource &&
                    (wanted.name === undefined || call.name === wanted.name),
                ),
            )
            .map(describe),
        ),
      ),
    );
  });
}

export interface AgentPassesOptions {
  /** The agent's view of its cluster, recording (see `recording`). */
  api: AgentApi;
  /** The settings the delivered Deployment gives the agent. */
  config: AgentConfig;
  publicKeyPem: string;
  now: Date;
  /**
   * Between the passes: changes k3k's kubeconfig of every delivered VirtualCluster (and whatever
   * else the second pass must write again), so that the second pass re-seals.
   */
  betweenPasses(): Promise<void>;
}

/**
 * Two whole passes, so that every call the agent makes is made: the first fills (or finds
 * filled) each report, its signing key and each sealed kubeconfig; then each kubeconfig changes
 * and the second pass, a heartbeat later and without the mounted key file (its fallback reads the
 * key's ConfigMap), updates them all.
 */
export async function agentPasses(options: AgentPassesOptions): Promise<PassSummary[]> {
  const deps = { api: options.api, readFile: () => options.publicKeyPem };
  const first = await runPass({ ...deps, config: options.config, now: options.now });
  await options.betweenPasses();
  const withoutFile = { ...options.config };
  delete withoutFile.publicKeyFile;
  const later = new Date(options.now.getTime() + REPORT_HEARTBEAT_SECONDS * 1000);
  return [first, await runPass({ ...deps, config: withoutFile, now: later })];
}
