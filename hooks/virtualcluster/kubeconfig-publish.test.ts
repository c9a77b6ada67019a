// k3k's kubeconfig is not trusted (issue 15, finding 3): through the real hook server, a
// kubeconfig with an exec command, an auth-provider, a proxy-url or a file path is not
// published, its condition names the field, and neither the answer nor a log line carries any
// kubeconfig text (a marker planted in the kubeconfig, and every long value of it).
import { expect } from 'chai';
import request from 'supertest';
import type { VirtualCluster, VirtualClusterStatus } from '../generated/types/index.js';
import type { CompositeSyncResponse, KubernetesObject } from '../metacontroller/protocol.js';
import { productApp } from '../controllers/testing.js';
import { syncVirtualCluster } from './sync.js';
import {
  acceptedRelated,
  asObserved,
  CONFIG,
  FORBIDDEN_KUBECONFIGS,
  K3K_KUBECONFIG,
  k3kKubeconfigSecret,
  MARKER,
  NOW,
  syncRequest,
  virtualCluster,
  withFields,
  withStatus,
} from './testing.js';

const NODE_PORT = 31234;

type App = Awaited<ReturnType<typeof productApp>>['app'];

/** What must never leave the hook server: the marker and every long value of the kubeconfig. */
function secretsOf(source: string): string[] {
  const values = [...source.matchAll(/:\s*([^\s{}[\],]{16,})\s*$/gm)].map((match) => match[1]!);
  return [MARKER, ...values];
}

function expectNoKubeconfigText(text: string, source: string, where: string): void {
  for (const secret of secretsOf(source)) {
    const leaked = text.includes(secret);
    expect(leaked, `${where} carries kubeconfig text ${secret.slice(0, 12)}…`).to.equal(false);
  }
}

function condition(status: VirtualClusterStatus, type: string) {
  return status.conditions?.find((c) => c.type === type);
}

/** Resolves a VirtualCluster through the app; its children observed with the NodePort. */
async function resolved(app: App): Promise<{ vc: VirtualCluster; children: KubernetesObject[] }> {
  const first = await request(app)
    .post('/hooks/virtualcluster/sync')
    .send(syncRequest(virtualCluster()))
    .expect(200);
  const children = (first.body.children as KubernetesObject[]).map((child) =>
    asObserved(child, child.kind === 'Service' ? { nodePort: NODE_PORT } : {}),
  );
  return { vc: withStatus(virtualCluster(), first.body.status), children };
}

/** One sync through the app with k3k's kubeconfig `source`; every log line and the answer. */
async function syncWith(source: string) {
  const { app, logs } = await productApp(NOW);
  const { vc, children } = await resolved(app);
  const response = await request(app)
    .post('/hooks/virtualcluster/sync')
    .send(syncRequest(vc, [...acceptedRelated(), k3kKubeconfigSecret(source)], children))
    .expect(200);
  await logs.waitForLines(2);
  const body = response.body as CompositeSyncResponse & { status: VirtualClusterStatus };
  return { response, body, logs: logs.lines.join('\n') };
}

describe('VirtualCluster: a refused k3k kubeconfig over HTTP', function () {
  // The first productApp() loads every controller and the webhook validators.
  this.timeout(30_000);
  before(async () => {
    await productApp(NOW);
  });

  it('publishes a valid one (the control: the text scan would see a leak)', async () => {
    const { body } = await syncWith(K3K_KUBECONFIG);
    const secret = body.children.find((child) => child.kind === 'Secret') as
      (KubernetesObject & { data: Record<string, string> }) | undefined;
    expect(secret).to.not.equal(undefined);
    const text = Buffer.from(secret!.data['kubeconfig.yaml']!, 'base64').toString('utf8');
    expect(() => expectNoKubeconfigText(text, K3K_KUBECONFIG, 'the Secret')).to.throw(
      /carries kubeconfig text/,
    );
  });

  for (const { what, source, path } of FORBIDDEN_KUBECONFIGS) {
    it(`does not publish ${what}; the condition names ${path}, nothing quotes the kubeconfig`, async () => {
      const { response, body, logs } = await syncWith(source);
      expect(body.children.map((child) => child.kind)).to.not.include('Secret');
      expect(body.status.credential).to.equal(undefined);
      const published = condition(body.status, 'KubeconfigPublished');
      expect(published).to.deep.include({ status: 'False', reason: 'K3kKubeconfigRejected' });
      expect(published?.message).to.contain(
        `k3k's kubeconfig Secret k3k-team-a-kubeconfig is not published: ${path} is not allowed`,
      );
      expect(body.status.phase).to.equal('Provisioning');
      expectNoKubeconfigText(response.text, source, 'the answer');
      expectNoKubeconfigText(logs, source, 'the logs');
    });
  }

  it('reports a YAML error by kind and position, not the line holding the key', async () => {
    const source = K3K_KUBECONFIG.replace(
      /^ {4}client-key-data: .*$/m,
      `   client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0t${MARKER}S0tCg==\n  x: [`,
    );
    const { response, body, logs } = await syncWith(source);
    expect(body.children.map((child) => child.kind)).to.not.include('Secret');
    const published = condition(body.status, 'KubeconfigPublished');
    expect(published).to.deep.include({ status: 'False', reason: 'K3kKubeconfigInvalid' });
    expect(published?.message).to.match(/cannot be used: not valid YAML \([A-Z_]+ at line 19,/);
    expectNoKubeconfigText(response.text, source, 'the answer');
    expectNoKubeconfigText(logs, source, 'the logs');
  });

  it('refuses a kubeconfig over 64 KiB without decoding it', async () => {
    const source = withFields('user', [`token: ${MARKER}${'t'.repeat(200_000)}`]);
    const { response, body, logs } = await syncWith(source);
    expect(body.children.map((child) => child.kind)).to.not.include('Secret');
    const published = condition(body.status, 'KubeconfigPublished');
    expect(published).to.deep.include({ status: 'False', reason: 'K3kKubeconfigRejected' });
    expect(published?.message).to.match(
      /its data\.kubeconfig\.yaml is \d+ base64 characters, more than the 87384 of the 65536 bytes \(64 KiB\)/,
    );
    expectNoKubeconfigText(response.text, source, 'the answer');
    expectNoKubeconfigText(logs, source, 'the logs');
  });
});

describe('VirtualCluster: a published kubeconfig once k3k’s is refused', () => {
  const sync = (vc: VirtualCluster, related: KubernetesObject[], children: KubernetesObject[]) =>
    syncVirtualCluster(syncRequest(vc, related, children), CONFIG, NOW);

  function world() {
    const vc = virtualCluster();
    const first = sync(vc, acceptedRelated(), []);
    const children = first.children.map((child) =>
      asObserved(child, child.kind === 'Service' ? { nodePort: NODE_PORT } : {}),
    );
    return { vc: withStatus(vc, first.status), children };
  }

  it("keeps the Secret published from a valid kubeconfig when k3k's becomes refused", () => {
    const { vc, children } = world();
    const valid = sync(vc, [...acceptedRelated(), k3kKubeconfigSecret()], children);
    const secret = asObserved(valid.children.find((child) => child.kind === 'Secret')!);
    const exec = FORBIDDEN_KUBECONFIGS[0]!.source;
    const after = sync(
      withStatus(vc, valid.status),
      [...acceptedRelated(), k3kKubeconfigSecret(exec)],
      [...children, secret],
    );
    const kept = after.children.find((child) => child.kind === 'Secret') as unknown as {
      data: unknown;
    };
    expect(kept.data).to.deep.equal((secret as unknown as { data: unknown }).data);
    expect(condition(after.status as VirtualClusterStatus, 'KubeconfigPublished')).to.deep.include({
      status: 'True',
      reason: 'KubeconfigPublished',
    });
  });

  it('withdraws a published Secret that holds a field off the allowlist, saying which', () => {
    const { vc, children } = world();
    const valid = sync(vc, [...acceptedRelated(), k3kKubeconfigSecret()], children);
    const secret = asObserved(
      valid.children.find((child) => child.kind === 'Secret')!,
    ) as KubernetesObject & { data: Record<string, string> };
    // As a release before the allowlist would have published it.
    const legacy = FORBIDDEN_KUBECONFIGS[0]!.source.replace(
      'https://10.43.12.34:443',
      `https://10.0.12.7:${NODE_PORT}`,
    );
    secret.data['kubeconfig.yaml'] = Buffer.from(legacy).toString('base64');
    for (const related of [
      acceptedRelated(), // k3k's Secret gone
      [...acceptedRelated(), k3kKubeconfigSecret(FORBIDDEN_KUBECONFIGS[1]!.source)],
    ]) {
      const after = sync(withStatus(vc, valid.status), related, [...children, secret]);
      expect(after.children.map((child) => child.kind)).to.not.include('Secret');
      const status = after.status as VirtualClusterStatus;
      expect(status.credential).to.equal(undefined);
      expect(condition(status, 'KubeconfigPublished')?.message).to.contain(
        `The published Secret ${secret.metadata.name} was withdrawn: users[0].user.exec is not allowed`,
      );
      expect(JSON.stringify(after)).to.not.contain(MARKER);
    }
    // With k3k's valid again, it is rendered afresh.
    const fixed = sync(
      withStatus(vc, valid.status),
      [...acceptedRelated(), k3kKubeconfigSecret()],
      [...children, secret],
    );
    const rendered = fixed.children.find((child) => child.kind === 'Secret') as unknown as {
      data: Record<string, string>;
    };
    expect(Buffer.from(rendered.data['kubeconfig.yaml']!, 'base64').toString()).to.not.contain(
      'exec',
    );
  });
});
