import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { DEFAULT_CELL_CONFIG } from '../cell/config.js';
import { gpuNode, readyProvider } from '../cell/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { publicKeyPemOf } from '../remote/sealing-keys.js';
import { createLogger } from '../server/logger.js';
import type { AgentConfig } from './config.js';
import { runAgentLoop } from './loop.js';
import {
  agentWorkObjects,
  captureLogLines,
  deliveredVirtualCluster,
  emptyConfigMap,
  fakeApi,
  k3kKubeconfigSecret,
  type FakeApi,
} from './testing.js';
import { AgentWatches } from './watches.js';

const VC_UID = '7d1c0a52-aaaa-4bbb-8ccc-ddddeeeeffff';
const SECRET_WATCH = '/api/v1/namespaces/tenant-a/secrets';
const SEALED_PATH = '/api/v1/namespaces/tenant-a/configmaps/kubecell-team-a-sealed-kubeconfig';
const KUBECONFIG = 'apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user: {token: t0p-s3cret}\n';
const PUBLIC_PEM = publicKeyPemOf(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);

/** A pass an hour apart: only a watch can make one sooner. */
const config: AgentConfig = {
  intervalSeconds: 3600,
  machineProfiles: ['a100'],
  managedCluster: 'cell-remote',
  cell: DEFAULT_CELL_CONFIG,
};

/** The managed cluster with the agent's work applied, the hub's public key included. */
function cluster(): KubernetesObject[] {
  const publicKey = emptyConfigMap('kubecell-system', 'kubecell-sealing-public-key');
  (publicKey as { data?: Record<string, string> }).data = { 'public-key.pem': PUBLIC_PEM };
  return [
    gpuNode('n1'),
    ...readyProvider(),
    ...agentWorkObjects(),
    emptyConfigMap('kubecell-system', 'kubecell-cell-report-a100'),
    publicKey,
  ];
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The agent's loop on `api`, watching it; stop() ends it. */
function running(api: FakeApi) {
  const { lines, stream } = captureLogLines();
  const controller = new AbortController();
  const done = runAgentLoop({
    api,
    config,
    logger: createLogger({ level: 'info', stream }),
    signal: controller.signal,
    watch: api.watch,
    debounceMs: 20,
  });
  const passes = () => lines().filter((line) => line['msg'] === 'cell agent pass');
  const stop = async () => {
    controller.abort();
    await done;
  };
  return { lines, passes, stop };
}

const openWatches = (api: FakeApi, path: string) =>
  api.watches.filter((watch) => watch.open && watch.path === path);

describe('the cell agent reacts to what it watches (hooks/agent/watches.ts)', function () {
  this.timeout(20_000);

  it('seals a kubeconfig k3k writes after the agent started, in a pass the watches wake', async () => {
    const api = fakeApi(...cluster());
    const agent = running(api);
    try {
      await until('the first pass', () => agent.passes()[0]);
      // OCM's work agent applies the VirtualCluster's work: its host namespace, the ConfigMap.
      api.put(...deliveredVirtualCluster('tenant-a', 'team-a', VC_UID));
      await until('the Secret watched by name', () => openWatches(api, SECRET_WATCH)[0]);
      expect(openWatches(api, SECRET_WATCH)[0]?.query).to.include({
        fieldSelector: 'metadata.name=k3k-team-a-kubeconfig',
      });
      const before = agent.passes().length;
      api.put(k3kKubeconfigSecret('tenant-a', 'team-a', KUBECONFIG));
      const sealed = await until('the kubeconfig sealed', () =>
        agent
          .passes()
          .find(
            (pass, index) =>
              index >= before &&
              pass['sealed'] !== undefined &&
              (pass['sealed'] as Record<string, number>)['updated'] === 1,
          ),
      );
      expect(sealed['trigger']).to.equal('watch');
      const configMap = api.objects.get(SEALED_PATH) as { data?: Record<string, string> };
      expect(configMap.data?.['sealed']).to.be.a('string');
    } finally {
      await agent.stop();
    }
    expect(agent.passes()[0]?.['trigger']).to.equal('start');
    expect(
      api.watches.filter((watch) => watch.open),
      'closed on stop',
    ).to.deep.equal([]);
  });

  it('a burst of changes costs one pass', async () => {
    const api = fakeApi(...cluster(), ...deliveredVirtualCluster('tenant-a', 'team-a', VC_UID));
    const agent = running(api);
    try {
      await until('the Secret watched', () => openWatches(api, SECRET_WATCH)[0]);
      await until('quiet', () => agent.passes().length >= 2 && agent.passes());
      await new Promise((resolve) => setTimeout(resolve, 100));
      const before = agent.passes().length;
      api.put(k3kKubeconfigSecret('tenant-a', 'team-a', KUBECONFIG));
      api.put(k3kKubeconfigSecret('tenant-a', 'team-a', `${KUBECONFIG}# again\n`));
      api.put(...deliveredVirtualCluster('tenant-a', 'team-a', VC_UID));
      await until('a pass', () => agent.passes()[before]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(
        agent
          .passes()
          .slice(before)
          .map((pass) => pass['trigger']),
      ).to.deep.equal(['watch']);
    } finally {
      await agent.stop();
    }
  });

  it('a refused watch is logged and retried while the interval goes on; once open, a pass catches up', async () => {
    const api = fakeApi(...cluster(), ...deliveredVirtualCluster('tenant-a', 'team-a', VC_UID));
    api.failing.add(SECRET_WATCH);
    const agent = running(api);
    try {
      const failed = await until('the failure logged', () =>
        agent.lines().find((line) => line['msg'] === 'cell agent watch failed'),
      );
      expect(failed).to.include({
        level: 'warn',
        watch: 'Secret tenant-a/k3k-team-a-kubeconfig',
        error: `GET ${SECRET_WATCH}: HTTP 403: forbidden`,
        failures: 1,
        retryInSeconds: 1,
      });
      api.put(k3kKubeconfigSecret('tenant-a', 'team-a', KUBECONFIG));
      api.failing.delete(SECRET_WATCH); // the Role arrives
      const resumed = await until('the recovery logged', () =>
        agent.lines().find((line) => line['msg'] === 'cell agent watch resumed'),
      );
      expect(resumed).to.include({ level: 'info', watch: 'Secret tenant-a/k3k-team-a-kubeconfig' });
      await until('sealed after the recovery', () =>
        agent.passes().find((pass) => (pass['sealed'] as Record<string, number>)['updated'] === 1),
      );
    } finally {
      await agent.stop();
    }
    expect(JSON.stringify(agent.lines())).to.not.contain('t0p-s3cret');
  });

  it('a watch the apiserver ends resumes from the last resourceVersion, without a pass', async () => {
    const api = fakeApi(...cluster(), ...deliveredVirtualCluster('tenant-a', 'team-a', VC_UID));
    const agent = running(api);
    try {
      const first = await until('the Secret watched', () => openWatches(api, SECRET_WATCH)[0]);
      api.put(k3kKubeconfigSecret('tenant-a', 'team-a', KUBECONFIG));
      await until('sealed', () =>
        agent.passes().find((pass) => (pass['sealed'] as Record<string, number>)['updated'] === 1),
      );
      const seen = api.objects.get(`${SECRET_WATCH}/k3k-team-a-kubeconfig`)?.metadata
        .resourceVersion;
      const passes = agent.passes().length;
      first.open = false;
      first.handlers.done(undefined); // timeoutSeconds reached
      const again = await until('watched again', () => openWatches(api, SECRET_WATCH)[0]);
      expect(again.query['resourceVersion']).to.equal(seen);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(agent.passes()).to.have.length(passes);
      expect(agent.lines().map((line) => line['msg'])).to.not.include('cell agent watch failed');
    } finally {
      await agent.stop();
    }
  });

  it('lets go of the Secrets a pass no longer reads', () => {
    const api = fakeApi();
    const watches = new AgentWatches({
      watch: api.watch,
      changed: () => {},
      logger: createLogger({ level: 'error', stream: captureLogLines().stream }),
    });
    watches.start();
    watches.followSecrets([
      { namespace: 'tenant-a', name: 'k3k-a-kubeconfig' },
      { namespace: 'tenant-b', name: 'k3k-b-kubeconfig' },
    ]);
    watches.followSecrets([{ namespace: 'tenant-b', name: 'k3k-b-kubeconfig' }]);
    expect(watches.watching()).to.deep.equal([
      'Secret tenant-b/k3k-b-kubeconfig',
      'host Namespaces',
    ]);
    watches.stop();
    expect(watches.watching()).to.deep.equal([]);
  });
});
