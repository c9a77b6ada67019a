// Step 0 of the install and Metacontroller's identity, rendered with `kubectl kustomize` as a
// user renders them: manifests/metacontroller-install/ is Metacontroller v4.17.2's own manifests
// (their sha256 as its upstream/README.md records them) with the flags docs/operations.md
// recommends, on the pinned image; and the component manifests/components/metacontroller-identity,
// in the overlay docs/operations.md shows, moves every ClusterRoleBinding subject and the
// NetworkPolicy kubecell-hooks together. Needs the kubectl the cluster tests build
// (`npx tsx test/cluster/build-binaries.ts`); no cluster.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { binaryPaths } from '../../harness/cluster/binaries.js';
import {
  METACONTROLLER_INSTALL_DIR,
  STACK_OWN_FLAGS,
  flagName,
  kustomizeBuild,
  metacontrollerContainer,
  metacontrollerInstallArgs,
} from '../../harness/cluster/metacontroller-install.js';
import { readPinnedVersions } from '../../harness/cluster/versions.js';
import { ingressAllowed, podsOf } from './network-policy.js';
import { findObject, readYamlDocuments, repoRoot, type Json } from './support.js';

const kubectl = binaryPaths(readPinnedVersions()).kubectl;
const version = readPinnedVersions().metacontroller.version;
const UPSTREAM = path.join(METACONTROLLER_INSTALL_DIR, 'upstream');
const OPERATIONS = readFileSync(path.join(repoRoot, 'docs', 'operations.md'), 'utf8');

/** The raw text (code blocks included) of a `### ` section of operations.md. */
function rawStep(title: string): string {
  const start = OPERATIONS.indexOf(`\n### ${title}\n`);
  expect(start, title).to.be.greaterThan(-1);
  const end = OPERATIONS.indexOf('\n### ', start + 1);
  return OPERATIONS.slice(start, end === -1 ? undefined : end);
}

/** The yaml blocks of a docs section whose first line is `# <dir>/<file>`, by file. */
function documentedFiles(text: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const match of text.matchAll(/```yaml\n# ([\w./-]+\.yaml)[^\n]*\n([\s\S]*?)```/g)) {
    files.set(match[1] as string, match[2] as string);
  }
  return files;
}

/**
 * Builds the documented overlay in a scratch folder: `kubecell` links to this repository, the
 * overlay's files are the docs' own, with `../kubecell/manifests` replaced by `../kubecell/<base>`.
 */
function buildDocumentedOverlay(base: string, account = 'metacontroller'): Json[] {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'kubecell-identity-'));
  try {
    symlinkSync(repoRoot, path.join(scratch, 'kubecell'));
    const step = rawStep("4. Metacontroller's identity");
    for (const [file, text] of documentedFiles(step)) {
      mkdirSync(path.join(scratch, path.dirname(file)), { recursive: true });
      writeFileSync(
        path.join(scratch, file),
        text
          .replace('../kubecell/manifests\n', `../kubecell/${base}\n`)
          .replace('serviceAccount: metacontroller\n', `serviceAccount: ${account}\n`),
      );
    }
    return kustomizeBuild(kubectl, path.join(scratch, 'platform'));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function subjectsOf(objects: Json[]): Map<string, unknown> {
  return new Map(
    objects
      .filter((object) => object.kind === 'ClusterRoleBinding')
      .map((object) => [String((object.metadata as Json).name), object.subjects] as const),
  );
}

describe('Metacontroller install (manifests/metacontroller-install/) and identity', function () {
  before(function () {
    if (!existsSync(kubectl)) {
      console.warn(`skipped: no ${kubectl} (npx tsx test/cluster/build-binaries.ts builds it)`);
      this.skip();
    }
  });

  describe('the overlay', () => {
    it('vendors upstream files whose sha256 are those its README records', () => {
      const readme = readFileSync(path.join(UPSTREAM, 'README.md'), 'utf8');
      const rows = [...readme.matchAll(/^\| `([^`]+)` +\| `([0-9a-f]{64})` \|$/gm)];
      expect(rows.length).to.equal(5);
      for (const [, file, sha256] of rows) {
        const bytes = readFileSync(path.join(UPSTREAM, file as string));
        expect(createHash('sha256').update(bytes).digest('hex'), file).to.equal(sha256);
      }
    });

    it('runs the pinned upstream image, with upstream args and the documented flags added', () => {
      const upstream = readYamlDocuments(
        path.relative(repoRoot, path.join(UPSTREAM, 'metacontroller.yaml')),
      );
      const upstreamContainer = metacontrollerContainer(upstream);
      const rendered = metacontrollerContainer(kustomizeBuild(kubectl, METACONTROLLER_INSTALL_DIR));
      expect(rendered.image).to.equal(upstreamContainer.image);
      expect(rendered.image).to.equal(`ghcr.io/metacontroller/metacontroller:${version}`);
      expect(rendered.args.slice(0, upstreamContainer.args.length)).to.deep.equal(
        upstreamContainer.args,
      );
      const added = rendered.args.slice(upstreamContainer.args.length);
      expect(added).to.include.members([
        '--apply-strategy=server-side-apply',
        '--client-go-qps=50',
        '--client-go-burst=100',
      ]);
      const prerequisites = rawStep('1. Prerequisites');
      for (const flag of added)
        expect(prerequisites, `operations.md names ${flag}`).to.include(flag);
      expect(rendered.namespace).to.equal('metacontroller');
      expect(rendered.serviceAccountName).to.equal('metacontroller');
    });
  });

  it("the cluster tests' Metacontroller runs with the overlay's flags, but for its own listeners, kubeconfig, discovery interval and log level", () => {
    const rendered = metacontrollerContainer(kustomizeBuild(kubectl, METACONTROLLER_INSTALL_DIR));
    const stack = metacontrollerInstallArgs(kubectl, version);
    expect(stack).to.deep.equal(
      rendered.args.filter(
        (arg) => !(STACK_OWN_FLAGS as readonly string[]).includes(flagName(arg)),
      ),
    );
    expect(stack).to.include('--apply-strategy=server-side-apply');
    expect(stack.map(flagName)).to.not.include('discovery-interval');
  });

  describe("the component metacontroller-identity, in operations.md's overlay", () => {
    const bases = [
      'manifests',
      'manifests/metacontroller-core',
      'manifests/metacontroller-install',
      'metacontroller/gpucellpool/kubevirt',
      'metacontroller/gpucellpool/cluster-api',
    ];
    const moved = { kind: 'ServiceAccount', name: 'metacontroller', namespace: 'platform-system' };

    for (const base of bases) {
      it(`${base}/: every binding of metacontroller/metacontroller names platform-system instead`, () => {
        const before = subjectsOf(kustomizeBuild(kubectl, path.join(repoRoot, base)));
        const after = buildDocumentedOverlay(base);
        const changed = [...before].filter(([, subjects]) =>
          JSON.stringify(subjects).includes('"namespace":"metacontroller"'),
        );
        expect(changed, 'a binding to move').to.not.deep.equal([]);
        for (const [name] of changed)
          expect(subjectsOf(after).get(name), name).to.deep.equal([moved]);
        expect(after.filter((object) => object.kind === 'ConfigMap')).to.deep.equal([]);
      });
    }

    it('manifests/: the NetworkPolicy admits hook calls from platform-system, no longer from metacontroller', () => {
      const objects = buildDocumentedOverlay('manifests');
      const hookServer = podsOf(findObject(objects, 'Deployment', 'kubecell-hooks'));
      const http = hookServer.ports.find((port) => port.name === 'http')?.containerPort as number;
      const policies = objects.filter((object) => object.kind === 'NetworkPolicy');
      const from = (namespace: string) => ({
        namespace,
        labels: { 'app.kubernetes.io/name': 'metacontroller' },
      });
      expect(ingressAllowed(policies, from('platform-system'), hookServer, http)).to.equal(true);
      expect(ingressAllowed(policies, from('metacontroller'), hookServer, http)).to.equal(false);
    });

    it('the ServiceAccount is the setting too', () => {
      const subjects = subjectsOf(buildDocumentedOverlay('manifests', 'kubecell-mc'));
      expect(subjects.get('kubecell-metacontroller')).to.deep.equal([
        { ...moved, name: 'kubecell-mc' },
      ]);
    });

    it('manifests/metacontroller-install/: Metacontroller itself runs in platform-system', () => {
      const objects = buildDocumentedOverlay('manifests/metacontroller-install');
      const container = metacontrollerContainer(objects);
      expect(container.namespace).to.equal('platform-system');
      expect(container.serviceAccountName).to.equal('metacontroller');
      findObject(objects, 'Namespace', 'platform-system');
      const account = findObject(objects, 'ServiceAccount', 'metacontroller');
      expect((account.metadata as Json).namespace).to.equal('platform-system');
    });
  });
});
