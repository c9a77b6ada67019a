// The cell agent's least privilege on a real managed cluster: what hooks/delivery/agent-rbac.test.ts
// checks in memory, here against `cell-remote`'s apiserver with the RBAC that OCM's work agent
// applied from the hub's works. Whole agent passes (test/support/agent-rbac.ts `agentPasses`) run
// as the delivered ServiceAccount, with the settings of the delivered Deployment, recording every
// call (between the passes k3k's kubeconfig changes and the agent's signing key is lost, so that
// the second pass writes everything again), then the watches the agent keeps are opened as that
// account (the apiserver authorizes a watch by fieldSelector metadata.name as one for that name);
// the Roles and ClusterRoles the apiserver has bound to that account are read back; and calls
// outside them are made to see the apiserver refuse them.
import { KubeConfig } from '@kubernetes/client-node';
import { loadAgentConfig } from '../../../hooks/agent/config.js';
import {
  ApiError,
  kubeApi,
  kubeWatch,
  type AgentApi,
  type WatchApi,
} from '../../../hooks/agent/kube-api.js';
import type { PassSummary } from '../../../hooks/agent/pass.js';
import { REPORT_HEARTBEAT_SECONDS } from '../../../hooks/agent/reports.js';
import type { KubernetesObject } from '../../../hooks/metacontroller/protocol.js';
import {
  AGENT_IDENTITY_CONFIGMAP,
  AGENT_NAME,
  AGENT_NAMESPACE,
  AGENT_SIGNING_KEY_SECRET,
  SEALING_PUBLIC_KEY_CONFIGMAP,
  SEALING_PUBLIC_KEY_KEY,
} from '../../../hooks/remote/contract.js';
import { deliveredPod } from '../../../harness/cell-agent/delivered-pod.js';
import {
  agentPasses,
  agentWatchAnswers,
  deniedCalls,
  grantsOf,
  recording,
  recordingWatch,
  unusedGrants,
  type Access,
  type Grant,
} from '../../support/agent-rbac.js';
import { HUB_KUBECONFIG_SECRET, OCM_AGENT_NAMESPACE } from '../../../harness/cluster/ocm-agents.js';
import { deliveredAgentDeployment, managedView, type RemoteWorld } from './remote-fixtures.js';
import { getObject, kubectl } from './support.js';

export interface AgentRbacFindings {
  passes: PassSummary[];
  /** What the apiserver answered each watch the agent keeps: `open`, or the error. */
  watches: Record<string, string>;
  grants: Grant[];
  /** Calls of the passes that the bound roles do not allow (as RBAC matches them). */
  denied: string[];
  /** Granted verbs on granted names that no call of the passes used. */
  unused: string[];
  /** Each call outside the grants: the apiserver's HTTP status, or `allowed`. */
  outside: Record<string, number | 'allowed'>;
}

type Binding = KubernetesObject & {
  roleRef: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
};

const isAgent = (binding: Binding): boolean =>
  (binding.subjects ?? []).some(
    (s) => s.kind === 'ServiceAccount' && s.name === AGENT_NAME && s.namespace === AGENT_NAMESPACE,
  );

/** The Roles and ClusterRoles the managed cluster binds to the agent's ServiceAccount. */
async function boundRoles(world: RemoteWorld): Promise<KubernetesObject[]> {
  const list = async (args: string[]) =>
    (JSON.parse(await kubectl(managedView(world), [...args, '-o', 'json'])) as { items: Binding[] })
      .items;
  const bindings = [
    ...(await list(['get', 'clusterrolebindings'])),
    ...(await list(['get', 'rolebindings', '--all-namespaces'])),
  ].filter(isAgent);
  const roles: KubernetesObject[] = [];
  for (const { metadata, roleRef } of bindings) {
    const kind = roleRef.kind === 'Role' ? 'role' : 'clusterrole';
    const where = kind === 'role' ? ['-n', metadata.namespace!] : [];
    const role = JSON.parse(
      await kubectl(managedView(world), ['get', kind, roleRef.name, ...where, '-o', 'json']),
    ) as KubernetesObject;
    // A ClusterRole bound by a RoleBinding grants its rules in that namespace only.
    roles.push(
      kind === 'clusterrole' && metadata.namespace
        ? { ...role, kind: 'Role', metadata: { ...role.metadata, namespace: metadata.namespace } }
        : role,
    );
  }
  return roles;
}

/** k3k's kubeconfig of `name` changes, as a k3k that renewed its certificates would write it. */
async function changeKubeconfig(world: RemoteWorld, namespace: string, name: string) {
  const secret = `k3k-${name}-kubeconfig`;
  const found = await getObject(managedView(world), 'secret', secret, namespace);
  const data = (found as { data?: Record<string, string> } | undefined)?.data ?? {};
  const text = Buffer.from(data['kubeconfig.yaml'] ?? '', 'base64').toString('utf8');
  const changed = Buffer.from(`${text}# renewed ${new Date().toISOString()}\n`).toString('base64');
  await kubectl(managedView(world), [
    'patch',
    'secret',
    secret,
    '-n',
    namespace,
    '--type=merge',
    '-p',
    JSON.stringify({ data: { 'kubeconfig.yaml': changed } }),
  ]);
}

/**
 * The agent's signing key lost (its Secret and published key emptied), as after a restore: the
 * next pass makes and publishes a new one, which the hub then records for the cluster.
 */
async function forgetAgentKey(world: RemoteWorld): Promise<void> {
  for (const [kind, name] of [
    ['secret', AGENT_SIGNING_KEY_SECRET],
    ['configmap', AGENT_IDENTITY_CONFIGMAP],
  ] as const) {
    await kubectl(managedView(world), [
      'patch',
      kind,
      name,
      '-n',
      AGENT_NAMESPACE,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'remove', path: '/data' }]),
    ]);
  }
}

/** Opens a watch and closes it once answered: throws the refusal as an ApiError. */
function watchOnce(watch: WatchApi, path: string, query: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    let refused = false;
    void watch(path, query, {
      event: () => {},
      done: (error) => {
        refused = true;
        const status = (error as { statusCode?: number } | undefined)?.statusCode ?? 0;
        reject(new ApiError(status, `watch ${path}: ${String(error)}`));
      },
    }).then((handle) => {
      if (!refused) resolve();
      handle.abort();
    }, reject);
  });
}

/** Calls a compromised agent would like to make; none is in its grants. */
function outsideCalls(
  api: AgentApi,
  watch: WatchApi,
  hostNamespace: string,
): Record<string, () => Promise<void>> {
  const configMap = (namespace: string, name: string) =>
    ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } }) as KubernetesObject;
  return {
    'get ConfigMap kube-system/coredns': async () => {
      await api.get('/api/v1/namespaces/kube-system/configmaps/coredns');
    },
    'update ConfigMap kube-system/coredns': () =>
      api.update(
        '/api/v1/namespaces/kube-system/configmaps/coredns',
        configMap('kube-system', 'coredns'),
      ),
    [`get Secret ${OCM_AGENT_NAMESPACE}/${HUB_KUBECONFIG_SECRET} (the klusterlet's hub credential)`]:
      async () => {
        await api.get(`/api/v1/namespaces/${OCM_AGENT_NAMESPACE}/secrets/${HUB_KUBECONFIG_SECRET}`);
      },
    [`list Secrets in ${hostNamespace}`]: async () => {
      await api.list(`/api/v1/namespaces/${hostNamespace}/secrets`);
    },
    [`get another Secret in ${hostNamespace}`]: async () => {
      await api.get(`/api/v1/namespaces/${hostNamespace}/secrets/not-k3k`);
    },
    [`watch every Secret in ${hostNamespace}`]: () =>
      watchOnce(watch, `/api/v1/namespaces/${hostNamespace}/secrets`, {}),
    [`watch another Secret in ${hostNamespace} by name`]: () =>
      watchOnce(watch, `/api/v1/namespaces/${hostNamespace}/secrets`, {
        fieldSelector: 'metadata.name=not-k3k',
      }),
    'watch every ConfigMap': () => watchOnce(watch, '/api/v1/configmaps', {}),
    [`create a ConfigMap in ${hostNamespace}`]: () =>
      api.create(
        `/api/v1/namespaces/${hostNamespace}/configmaps`,
        configMap(hostNamespace, 'planted'),
      ),
  };
}

async function statusOf(call: () => Promise<void>): Promise<number | 'allowed'> {
  try {
    await call();
    return 'allowed';
  } catch (error) {
    if (error instanceof ApiError) return error.status;
    throw error;
  }
}

/**
 * Runs the agent's passes as its delivered ServiceAccount against `cell-remote` (the running
 * agent must be stopped: two writers would conflict) and makes the calls outside its grants.
 * The VirtualCluster `name` in `namespace` must be delivered, k3k's kubeconfig written.
 */
export async function agentRbacOnManagedCluster(
  world: RemoteWorld,
  virtualCluster: { namespace: string; name: string },
): Promise<AgentRbacFindings> {
  const pod = deliveredPod(await deliveredAgentDeployment(world));
  if ('problem' in pod) throw new Error(`the delivered agent cannot run here: ${pod.problem}`);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(
    await world.managed.cluster.kubeconfigForServiceAccount({
      namespace: AGENT_NAMESPACE,
      name: pod.serviceAccountName,
    }),
  );
  const keyMap = await getObject(
    managedView(world),
    'configmap',
    SEALING_PUBLIC_KEY_CONFIGMAP,
    AGENT_NAMESPACE,
  );
  const publicKeyPem = (keyMap as { data?: Record<string, string> } | undefined)?.data?.[
    SEALING_PUBLIC_KEY_KEY
  ];
  if (publicKeyPem === undefined) throw new Error('the agent work delivered no public key');
  const api = kubeApi(kubeConfig);
  const calls: Access[] = [];
  const passes = await agentPasses({
    api: recording(api, calls),
    config: loadAgentConfig(pod.env),
    publicKeyPem,
    // The second pass, a heartbeat after the first, runs now: no report is dated in the future.
    now: new Date(Date.now() - REPORT_HEARTBEAT_SECONDS * 1000),
    betweenPasses: async () => {
      await changeKubeconfig(world, virtualCluster.namespace, virtualCluster.name);
      await forgetAgentKey(world);
    },
  });
  const watch = kubeWatch(kubeConfig);
  const watches = await agentWatchAnswers(
    recordingWatch(watch, calls),
    passes[passes.length - 1]?.secrets ?? [],
  );
  const grants = grantsOf(await boundRoles(world));
  const outside: Record<string, number | 'allowed'> = {};
  for (const [what, call] of Object.entries(outsideCalls(api, watch, virtualCluster.namespace))) {
    outside[what] = await statusOf(call);
  }
  return {
    passes,
    watches,
    grants,
    denied: deniedCalls(calls, grants),
    unused: unusedGrants(calls, grants),
    outside,
  };
}
