// The versions the README and the quickstart state are the ones that were tested: Kubernetes and
// Metacontroller as pinned in test/cluster/versions.json, and k3k, Open Cluster Management and
// Cluster API as the tags of the upstream CRDs pinned in test/cluster/upstream-inputs.json. No
// "≥" or "or later" for them: nothing else was checked. The README's table of upstream inputs
// lists exactly the pinned files. In every hand-written doc, a version quoted with the name of
// Metacontroller, Kubernetes, k3k, OCM or Cluster API is the pinned one (OCM's components as
// versions.json pins them, its API's CRDs as upstream-inputs.json does), and no pinned version is
// followed by "or later" (issue 26). Unit test: no cluster.
import { expect } from 'chai';
import { readUpstreamInputs } from '../../harness/cluster/upstream-inputs.js';
import { readPinnedVersions } from '../../harness/cluster/versions.js';
import { handWrittenMarkdown, readRepoFile, section, tables } from './markdown.js';

const versions = readPinnedVersions();
const inputs = readUpstreamInputs();

/** The tag the pinned upstream files of a GitHub repository were taken from (all the same). */
function pinnedTag(repository: string): string {
  const tags = new Set(
    inputs
      .filter((input) => input.project === `https://github.com/${repository}`)
      .map((input) => input.tag),
  );
  expect([...tags], `tags of ${repository} in upstream-inputs.json`).to.have.length(1);
  return [...tags][0] as string;
}

const kubernetesMinor = versions.kubernetes.version.replace(/^v(\d+\.\d+)\..*$/, '$1');

/** Component as written in the docs → the versions it may be stated with. */
const COMPONENTS: { name: RegExp; label: string; versions: string[] }[] = [
  {
    name: /\bKubernetes\b/,
    label: 'Kubernetes',
    versions: [versions.kubernetes.version],
  },
  {
    name: /\bMetacontroller\b/,
    label: 'Metacontroller',
    versions: [versions.metacontroller.version],
  },
  { name: /\bk3k\b/, label: 'k3k', versions: [pinnedTag('rancher/k3k')] },
  {
    name: /\bOpen Cluster Management\b/,
    label: 'Open Cluster Management',
    versions: [pinnedTag('open-cluster-management-io/api')],
  },
  {
    name: /\bCluster API\b/,
    label: 'Cluster API',
    versions: [pinnedTag('kubernetes-sigs/cluster-api')],
  },
];

const README = readRepoFile('README.md');
const QUICKSTART = readRepoFile('docs/quickstart.md');

/** The README's Install section, code blocks included (their comments make claims too). */
function readmeInstall(): string {
  const start = README.indexOf('\n## Install\n');
  const end = README.indexOf('\n## ', start + 1);
  expect(start, 'README has an "## Install" section').to.be.greaterThan(-1);
  return README.slice(start, end === -1 ? undefined : end);
}

/** The Install section's first list (the prerequisites), each item joined into one line. */
function prerequisiteBullets(): string[] {
  const bullets: string[] = [];
  for (const line of readmeInstall().split('\n')) {
    if (line.startsWith('- ')) bullets.push(line.slice(2));
    else if (line.startsWith('  ') && bullets.length > 0) {
      bullets[bullets.length - 1] += ` ${line.trim()}`;
    } else if (line.trim() !== '' && bullets.length > 0) break;
  }
  return bullets;
}

/** The quickstart's prerequisites table: component cell → version cell. */
function quickstartPrerequisites(): { component: string; version: string }[] {
  const prerequisites = section(QUICKSTART, 2, '1. Prerequisites');
  expect(prerequisites, 'docs/quickstart.md has "## 1. Prerequisites"').to.be.a('string');
  const [table] = tables(prerequisites ?? '');
  expect(table?.header.slice(0, 2)).to.deep.equal(['Component', 'Version']);
  return (table?.rows ?? []).map((row) => ({ component: row[0] ?? '', version: row[1] ?? '' }));
}

const SEMVER = /\bv?\d+\.\d+\.\d+\b/g;
const OPEN_ENDED = /≥|>=|\bor later\b|\bor newer\b|\band later\b|\bat least\b/;

function withV(version: string): string {
  return version.startsWith('v') ? version : `v${version}`;
}

/** `v1.1.0` → `v1.1`. */
function minorOf(version: string): string {
  return version.replace(/^(v?\d+\.\d+)\..*$/, '$1');
}

/** A version a doc quotes with a component's name, and the versions it may be. */
const QUOTED: { label: string; pattern: RegExp; versions: string[] }[] = [
  {
    label: 'Metacontroller',
    pattern: /\bMetacontroller\s+(v?\d+\.\d+\.\d+)\b/gi,
    versions: [versions.metacontroller.version],
  },
  {
    label: 'Kubernetes',
    pattern: /\b(?:Kubernetes|kube-apiserver)\s+(v?\d+\.\d+(?:\.\d+)?)\b/g,
    versions: [versions.kubernetes.version, minorOf(versions.kubernetes.version)],
  },
  {
    label: 'k3k',
    pattern: /\bk3k\s+(v?\d+\.\d+(?:\.\d+)?)\b/g,
    versions: [pinnedTag('rancher/k3k'), minorOf(pinnedTag('rancher/k3k'))],
  },
  {
    label: "OCM's components",
    pattern:
      /\b(?:OCM|Open Cluster Management|open-cluster-management-io\/ocm)\s+(v?\d+\.\d+\.\d+)\b/g,
    versions: [versions.ocm.version],
  },
  {
    label: "OCM's API (its CRDs)",
    pattern: /\bopen-cluster-management-io\/api\s+(v?\d+\.\d+\.\d+)\b/g,
    versions: [pinnedTag('open-cluster-management-io/api')],
  },
  {
    label: 'Cluster API',
    pattern: /\bCluster API\s+(v?\d+\.\d+\.\d+)\b/g,
    versions: [pinnedTag('kubernetes-sigs/cluster-api')],
  },
  {
    label: 'Cluster API Provider KubeVirt',
    pattern: /\bCluster API Provider KubeVirt\s+(v?\d+\.\d+\.\d+)\b/g,
    versions: [pinnedTag('kubernetes-sigs/cluster-api-provider-kubevirt')],
  },
];

/** Versions docs quote on purpose that are not the tested ones, with why. */
const UPSTREAM_FACTS = new Map([
  [
    'docs/cell-image.md: Kubernetes 1.34',
    'resource.k8s.io/v1 is served from Kubernetes 1.34 on: a fact about Kubernetes',
  ],
]);

/** Every version `text` (of `file`) quotes that is not a pinned one (UPSTREAM_FACTS aside). */
function unpinnedQuotes(file: string, text: string): string[] {
  return QUOTED.flatMap(({ label, pattern, versions: allowed }) =>
    [...text.matchAll(pattern)]
      .filter((match) => !allowed.map(withV).includes(withV(match[1] as string)))
      .map((match) => `${file}: ${match[0]}`)
      .filter((quote) => !UPSTREAM_FACTS.has(quote))
      .map((quote) => `${quote} (${label}: tested ${allowed[0] as string})`),
  );
}

const PINS = [
  versions.kubernetes.version,
  minorOf(versions.kubernetes.version),
  versions.metacontroller.version,
  versions.ocm.version,
  ...['rancher/k3k', 'open-cluster-management-io/api', 'kubernetes-sigs/cluster-api'].map(
    pinnedTag,
  ),
].map((version) => version.replace(/^v/, '').replace(/\./g, '\\.'));
const OPEN_ENDED_PIN = new RegExp(
  `(?:≥|>=|\\bat least)\\s*v?(?:${PINS.join('|')})\\b|` +
    `\\bv?(?:${PINS.join('|')})\\b\\S*\\s+(?:or|and)\\s+(?:later|newer|above)\\b`,
  'g',
);

/** "<pinned version> or later", "≥ <pinned version>" in `text`: a range nothing tested. */
function openEndedPins(file: string, text: string): string[] {
  return [...text.matchAll(OPEN_ENDED_PIN)].map((match) => `${file}: ${match[0]}`);
}

/** A check over every hand-written doc. */
function overDocs(check: (file: string, text: string) => string[]): string[] {
  return handWrittenMarkdown().flatMap((file) => check(file, readRepoFile(file)));
}

describe('stated versions are the tested ones (README, quickstart; versions.json, upstream-inputs.json)', function () {
  it('the README Install prerequisites name each tested version, and no other', function () {
    const bullets = prerequisiteBullets();
    for (const component of COMPONENTS) {
      const naming = bullets.filter((bullet) => component.name.test(bullet));
      expect(naming.length, `a prerequisite bullet names ${component.label}`).to.be.greaterThan(0);
      const stated = naming.flatMap((bullet) => (bullet.match(SEMVER) ?? []).map(withV));
      for (const version of component.versions) {
        expect(stated, `README states ${component.label} ${version}`).to.include(version);
      }
    }
    // Every full version in a bullet belongs to a component the bullet names.
    for (const bullet of bullets) {
      const allowed = COMPONENTS.filter((component) => component.name.test(bullet)).flatMap(
        (component) => component.versions,
      );
      for (const version of (bullet.match(SEMVER) ?? []).map(withV)) {
        expect(allowed, `"${version}" in the README prerequisite "${bullet}"`).to.include(version);
      }
    }
    const kubernetes = bullets.find((bullet) => /^\*\*Kubernetes /.test(bullet)) ?? '';
    expect(kubernetes, 'the Kubernetes bullet starts with the tested minor').to.match(
      new RegExp(`^\\*\\*Kubernetes ${kubernetesMinor.replace('.', '\\.')}\\*\\*`),
    );
  });

  it('the README Install section claims no open-ended version range', function () {
    for (const line of readmeInstall().split('\n')) {
      expect(line, 'README "## Install"').not.to.match(OPEN_ENDED);
    }
  });

  it('the quickstart prerequisites state the tested versions, and no open-ended range', function () {
    const rows = quickstartPrerequisites();
    for (const component of COMPONENTS) {
      const row = rows.find((candidate) => component.name.test(candidate.component));
      expect(row, `the quickstart lists ${component.label}`).to.not.equal(undefined);
      const stated = (row?.version.match(SEMVER) ?? []).map(withV);
      for (const version of component.versions) {
        expect(stated, `quickstart states ${component.label} ${version}`).to.include(version);
      }
    }
    for (const row of rows) {
      const allowed = COMPONENTS.filter((component) => component.name.test(row.component)).flatMap(
        (component) => component.versions,
      );
      for (const version of (row.version.match(SEMVER) ?? []).map(withV)) {
        expect(allowed, `"${version}" for ${row.component} in the quickstart`).to.include(version);
      }
      expect(row.version, `the quickstart's version of ${row.component}`).not.to.match(OPEN_ENDED);
    }
    const kubernetes = rows.find((row) => row.component === 'Kubernetes');
    expect(kubernetes?.version).to.match(new RegExp(`^${kubernetesMinor.replace('.', '\\.')}\\b`));
  });

  it('"Kubernetes", "kube-apiserver" and "Metacontroller" with a version mean the pinned one, everywhere in both', function () {
    for (const [file, text] of [
      ['README.md', README],
      ['docs/quickstart.md', QUICKSTART],
    ] as const) {
      for (const match of text.matchAll(
        /\b(Kubernetes|kube-apiserver)\s+v?(\d+\.\d+(?:\.\d+)?)\b/g,
      )) {
        const stated = match[2] as string;
        expect(
          [kubernetesMinor, versions.kubernetes.version.slice(1)],
          `${file}: "${match[0]}"`,
        ).to.include(stated);
      }
      for (const match of text.matchAll(/\bMetacontroller\s+(v?\d+\.\d+(?:\.\d+)?)\b/g)) {
        expect(withV(match[1] as string), `${file}: "${match[0]}"`).to.equal(
          versions.metacontroller.version,
        );
      }
    }
  });

  it("the README's table of upstream inputs lists exactly the pinned files, projects and tags", function () {
    const clusterTests = section(README, 3, 'Cluster tests');
    expect(clusterTests, 'README has "### Cluster tests"').to.be.a('string');
    const table = tables(clusterTests ?? '').find((candidate) => candidate.header[0] === 'File');
    expect(table?.header).to.deep.equal(['File', 'Upstream', 'Tag']);
    const stated = (table?.rows ?? [])
      .map(
        ([file, upstream, tag]) =>
          `${(file ?? '').replace(/`/g, '')} ${upstream ?? ''} ${tag ?? ''}`,
      )
      .sort();
    const pinned = inputs
      .map(
        (input) => `${input.path} ${input.project.replace('https://github.com/', '')} ${input.tag}`,
      )
      .sort();
    expect(stated).to.deep.equal(pinned);
  });

  it('(the checks find quoted versions and open-ended ranges)', function () {
    const text = `Metacontroller v0.0.1 and ${versions.metacontroller.version}; Kubernetes 1.0, k3k v0.0`;
    expect(unpinnedQuotes('x.md', text).map((found) => found.split(' (')[0])).to.deep.equal([
      'x.md: Metacontroller v0.0.1',
      'x.md: Kubernetes 1.0',
      'x.md: k3k v0.0',
    ]);
    expect(
      unpinnedQuotes('x.md', `Metacontroller ${versions.metacontroller.version}`),
    ).to.deep.equal([]);
    const pinned = versions.metacontroller.version.slice(1);
    expect(openEndedPins('x.md', `needs ${pinned} or later, ≥ ${pinned}`)).to.have.length(2);
    expect(openEndedPins('x.md', `needs ${pinned}, Go 1.26 or newer`)).to.deep.equal([]);
  });

  it('in every hand-written doc, a version quoted with a component is the pinned one', function () {
    expect(overDocs(unpinnedQuotes)).to.deep.equal([]);
  });

  it('no hand-written doc follows a pinned version with "or later" (or puts "≥" before it)', function () {
    expect(overDocs(openEndedPins)).to.deep.equal([]);
  });
});
