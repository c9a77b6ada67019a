// The cell agent's grants against the calls it makes, for hooks/delivery/agent-rbac.test.ts (a
// cluster in memory) and the remote-Cell e2e (a real managed cluster): each call the agent makes,
// its watches included, is recorded as the apiserver's RBAC authorizer sees it, judged against the delivered Roles and
// ClusterRole as that authorizer judges it, and every granted verb on every granted name must be
// used by some call.
import type { AgentConfig } from '../../hooks/agent/config.js';
import { Writable } from 'node:stream';
import type { AgentApi, WatchApi } from '../../hooks/agent/kube-api.js';
import { runPass, type PassSummary } from '../../hooks/agent/pass.js';
import { REPORT_HEARTBEAT_SECONDS } from '../../hooks/agent/reports.js';
import {
  AgentWatches,
  hostNamespacesTarget,
  secretTarget,
  watchErrorText,
  type SecretRef,
} from '../../hooks/agent/watches.js';
import type { PolicyRule } from '../../hooks/delivery/agent-rbac.js';
import type { KubernetesObject } from '../../hooks/metacontroller/protocol.js';
import { createLogger } from '../../hooks/server/logger.js';

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

/**
 * `/api/v1/...` or `/apis/<group>/<version>/...`, namespaced or not, a collection or an object. A
 * list or watch of a collection with `fieldSelector=metadata.name=<name>` names that object, as
 * the apiserver's requestinfo.go reads it.
 */
export function accessOf(verb: string, path: string): Access {
  const [base = '', search = ''] = path.split('?');
  const selector = new URLSearchParams(search).get('fieldSelector') ?? '';
  const selected = /^metadata\.name=([^,]+)$/.exec(selector)?.[1];
  const access = collectionAccess(verb, base);
  return access.name === undefined &&
    selected !== undefined &&
    (verb === 'list' || verb === 'watch')
    ? { ...access, name: selected }
    : access;
}

function collectionAccess(verb: string, path: string): Access {
  const segments = path.split('/').filter((s) => s !== '');
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

/** `watch`, recording each watch it opens in `calls` (the query as the request carries it). */
export function recordingWatch(watch: WatchApi, calls: Access[]): WatchApi {
  return (path, query, handlers) => {
    const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
    calls.push(accessOf('watch', `${path}?${search.toString()}`));
    return watch(path, query, handlers);
  };
}

/**
 * The watches the agent keeps once a pass read `secrets` (hooks/agent/watches.ts: the host
 * Namespaces, each Secret by name), opened through `watch` as the agent opens them; resolves
 * once each was answered (or after `timeoutMs`) with the answer of each, by the name the agent's
 * logs give it: `open`, or the error. Nothing is retried meanwhile.
 */
export async function agentWatchAnswers(
  watch: WatchApi,
  secrets: readonly SecretRef[],
  timeoutMs = 10_000,
): Promise<Record<string, string>> {
  const targets = [hostNamespacesTarget(), ...secrets.map(secretTarget)];
  const answers: Record<string, string> = {};
  let allAnswered: () => void = () => {};
  const answered = new Promise<void>((resolve) => (allAnswered = resolve));
  const answer = (path: string, what: string): void => {
    const target = targets.find((candidate) => candidate.path === path);
    if (target && !(target.name in answers)) answers[target.name] = what;
    if (Object.keys(answers).length === targets.length) allAnswered();
  };
  const answering: WatchApi = async (path, query, handlers) => {
    let failed = false;
    const handle = await watch(path, query, {
      event: handlers.event,
      done: (error) => {
        failed = true;
        answer(path, error === undefined ? 'closed' : watchErrorText(error));
        handlers.done(error);
      },
    });
    if (!failed) answer(path, 'open');
    return handle;
  };
  const silent = createLogger({
    level: 'error',
    stream: new Writable({ write: (_c, _e, done) => done() }),
  });
  const watches = new AgentWatches({
    watch: answering,
    changed: () => {},
    logger: silent,
    retryFirstMs: 10 * timeoutMs,
  });
  watches.start();
  watches.followSecrets(secrets);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      answered,
      new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
  } finally {
    clearTimeout(timer);
    watches.stop();
  }
  return answers;
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
