// What kubectl reads in a published kubeconfig (issue 23, finding 1). KubeCell checks k3k's
// kubeconfig with the `yaml` package; kubectl reads the published Secret with go-yaml, and the
// two once disagreed on U+2028, so an exec command passed KubeCell's allowlist. Here kubectl
// itself (the one the cluster tests build from Kubernetes' source) reads, with
// `kubectl config view --raw -o json`:
// - every hostile kubeconfig of the corpus as k3k's Secret would hold it, which shows that the
//   corpus is hostile in go-yaml's reading (exec, proxy-url, ... present);
// - every kubeconfig KubeCell publishes or keeps from that corpus, through the local path
//   (k3k's Secret) and the sealed remote path (a ManifestWork's sealed feedback): none holds
//   anything off the allowlist. A hostile kubeconfig is never published, and a Secret already
//   published is kept as it was.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type {
  CompositeSyncResponse,
  KubernetesObject,
} from '../../hooks/metacontroller/protocol.js';
import { syncVirtualCluster } from '../../hooks/virtualcluster/sync.js';
import {
  acceptedRelated,
  asObserved,
  byKind,
  condition,
  K3K_KUBECONFIG,
  k3kKubeconfigSecret,
  LATER,
  manifestWork,
  NOW,
  remoteConfig,
  remoteRelated,
  remoteResolved,
  resolvedWorld,
  runSync,
  sealedKubeconfig,
  syncRequest,
  VC_UID,
} from '../../hooks/virtualcluster/testing.js';
import { hostileKubeconfigs } from '../robustness/hostile-kubeconfigs.js';
import { ensureBinaries } from '../../harness/cluster/binaries.js';
import { runCommand } from '../../harness/cluster/processes.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from './shared-cluster.js';

type Shape = 'string' | { [field: string]: Shape } | [Shape];

const NAMED = (field: string, fields: Record<string, Shape>): Shape => [
  { name: 'string', [field]: fields },
];

/** The allowlist (hooks/virtualcluster/kubeconfig-policy.ts) as kubectl's JSON shows it. */
const ALLOWED: Shape = {
  kind: 'string',
  apiVersion: 'string',
  'current-context': 'string',
  preferences: {},
  clusters: NAMED('cluster', {
    server: 'string',
    'certificate-authority-data': 'string',
    'tls-server-name': 'string',
  }),
  users: NAMED('user', {
    'client-certificate-data': 'string',
    'client-key-data': 'string',
    token: 'string',
  }),
  contexts: NAMED('context', { cluster: 'string', user: 'string', namespace: 'string' }),
};

/** Every path of `value` that the allowlist does not have, as `users[0].user.exec`. */
function offAllowlist(value: unknown, shape: Shape, at = ''): string[] {
  if (shape === 'string') return typeof value === 'string' ? [] : [at];
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return value === null ? [] : [at];
    return value.flatMap((item, index) => offAllowlist(item, shape[0], `${at}[${index}]`));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [at];
  return Object.entries(value).flatMap(([key, child]) => {
    const where = at === '' ? key : `${at}.${key}`;
    const fieldShape = Object.hasOwn(shape, key) ? shape[key] : undefined;
    return fieldShape === undefined ? [where] : offAllowlist(child, fieldShape, where);
  });
}

/** Whether `value` has something at `field` (`users[0].user.exec`). */
function has(value: unknown, field: string): boolean {
  let here: unknown = value;
  for (const part of field.split(/\.|(?=\[)/)) {
    const index = /^\[(\d+)\]$/.exec(part);
    const next: unknown = index
      ? Array.isArray(here)
        ? here[Number(index[1])]
        : undefined
      : typeof here === 'object' && here !== null
        ? (here as Record<string, unknown>)[part]
        : undefined;
    if (next === undefined || next === null) return false;
    here = next;
  }
  return true;
}

function publishedText(response: CompositeSyncResponse): string | undefined {
  const secret = byKind(response.children, 'Secret') as
    (KubernetesObject & { data: Record<string, string> }) | undefined;
  const data = secret?.data['kubeconfig.yaml'];
  return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
}

describe("kubectl's reading of published kubeconfigs (go-yaml)", function () {
  let kubectl = '';
  let dir = '';
  let files = 0;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    kubectl = (await ensureBinaries()).kubectl;
    dir = mkdtempSync(path.join(tmpdir(), 'kubecell-kubeconfig-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** kubectl config view of `text`: its JSON, or undefined when kubectl cannot load it. */
  async function kubectlReads(text: string): Promise<unknown> {
    files += 1;
    const file = path.join(dir, `kubeconfig-${files}`);
    writeFileSync(file, text, { mode: 0o600 });
    const result = await runCommand(
      kubectl,
      ['config', 'view', '--raw', '-o', 'json', '--kubeconfig', file],
      { timeoutMs: 30_000 },
    );
    return result.code === 0 ? (JSON.parse(result.stdout) as unknown) : undefined;
  }

  async function expectOnlyAllowlisted(text: string, where: string): Promise<void> {
    const read = await kubectlReads(text);
    expect(read, `${where}: kubectl loads it`).to.not.equal(undefined);
    expect(offAllowlist(read, ALLOWED), `${where}: off the allowlist`).to.deep.equal([]);
  }

  const local = resolvedWorld({ nodePort: 31234 });
  const localSync = (text: string, published: KubernetesObject[] = []) =>
    runSync(
      local.vc,
      [...acceptedRelated(), k3kKubeconfigSecret(text)],
      [...local.children, ...published],
      LATER,
    );
  const remoteVc = remoteResolved();
  const remoteSync = (text: string, published: KubernetesObject[] = []) =>
    syncVirtualCluster(
      syncRequest(
        remoteVc,
        [
          ...remoteRelated(),
          manifestWork({ nodePort: 31234, sealed: sealedKubeconfig(VC_UID, text) }),
        ],
        published,
      ),
      remoteConfig(),
      NOW,
    );
  const paths = [
    { name: 'local', sync: localSync },
    { name: 'sealed remote', sync: remoteSync },
  ];

  it("publishes k3k's kubeconfig through both paths, holding only the allowlist in kubectl's reading", async function () {
    this.timeout(60_000);
    for (const { name, sync } of paths) {
      const text = publishedText(sync(K3K_KUBECONFIG));
      expect(text, name).to.be.a('string');
      await expectOnlyAllowlisted(text!, name);
      // The check can fail: kubectl's reading of k3k's text plus an exec is caught.
      const withExec = `${text!}\n`.replace(
        /^( {4}|\s+)client-key-data: .*$/m,
        (line) =>
          `${line}\n      exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}`,
      );
      const read = await kubectlReads(withExec);
      expect(offAllowlist(read, ALLOWED), `${name}: the check sees an exec`).to.include(
        'users[0].user.exec',
      );
    }
  });

  const corpus = hostileKubeconfigs();

  it(`the corpus is hostile as kubectl reads it (${corpus.length} kubeconfigs)`, async function () {
    this.timeout(300_000);
    const shown: string[] = [];
    for (const hostile of corpus.filter((entry) => entry.field !== undefined)) {
      const read = await kubectlReads(hostile.text);
      if (read !== undefined && has(read, hostile.field!)) shown.push(hostile.name);
      else expect.fail(`${hostile.name}: kubectl's reading has no ${hostile.field}`);
    }
    console.log(`      kubectl reads the attack in ${shown.length} hostile kubeconfigs`);
  });

  for (const { name, sync } of paths) {
    it(`refuses every hostile kubeconfig on the ${name} path and keeps the Secret already published`, async function () {
      this.timeout(300_000);
      const first = sync(K3K_KUBECONFIG);
      const secret = byKind(first.children, 'Secret') as KubernetesObject & {
        data: Record<string, string>;
      };
      const published = [asObserved(secret)];
      for (const hostile of corpus) {
        const fresh = sync(hostile.text);
        expect(publishedText(fresh), `${hostile.name}: published`).to.equal(undefined);
        const reason = condition(fresh, 'KubeconfigPublished')?.reason;
        expect(reason, hostile.name).to.be.oneOf(['K3kKubeconfigRejected', 'K3kKubeconfigInvalid']);

        const kept = byKind(sync(hostile.text, published).children, 'Secret') as typeof secret;
        expect(kept?.metadata.name, `${hostile.name}: kept`).to.equal(secret.metadata.name);
        expect(kept?.data, `${hostile.name}: kept as it was`).to.deep.equal(secret.data);
      }
      await expectOnlyAllowlisted(publishedText(first)!, `${name}: the kept Secret`);
    });
  }
});
