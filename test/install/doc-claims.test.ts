// Claims the hand-written docs make about the code, checked against the code (issue 26, item 7),
// so that a change of the code cannot leave them stale. Unit test: no cluster.
// - Controllers: a number of DecoratorControllers or CompositeControllers a doc states ("both",
//   "three") is the number metacontroller/ ships (the base and every GPUCellPool component); a
//   controller a doc names with its kind (DecoratorController `kubecell-delivery`) is one of that
//   kind; the controllers the quickstart shows after an install are those of the base.
// - Frozen Cell fields: the ones security.md lists are those the admission rule freezes
//   (changedFrozenCellFields, hooks/admission/rules.ts).
// - Body sizes: `64mb` is read as 64 × 1024 × 1024 bytes (parseByteSize), so no doc calls the
//   default body limit or budget "64 MB" (decimal).
// - A VirtualCluster's ManifestWork: docs/concepts.md and docs/remote-cells.md each name every
//   kind of object the delivery controller puts into it (renderVirtualClusterWork).
// - A VirtualCluster's endpoint: docs/networking.md says the k3k Cluster's `tlsSANs` holds only
//   the endpoint address, which is what the VirtualCluster controller renders.
// - Install commands: docs/operations.md is the one place that gives them (issue 26, item 4);
//   no other doc repeats an apply of the repository's kustomizations, the image build or the
//   install of the `kubecell` package.
// - The `kubecell` command: no doc runs it from the source tree (`npx tsx hooks/cli/kubecell.ts`)
//   rather than installed, nor redirects `kubecell kubeconfig` into a file rather than `-o`
//   (mode 0600) (issue 26, must 3).
import { expect } from 'chai';
import { changedFrozenCellFields } from '../../hooks/admission/rules.js';
import { CONFIG, placedVirtualCluster } from '../../hooks/delivery/testing.js';
import {
  renderVirtualClusterWork,
  type DeliveredVirtualCluster,
} from '../../hooks/delivery/vc-work.js';
import { DEFAULTS, parseByteSize } from '../../hooks/server/config.js';
import {
  backticked,
  handWrittenMarkdown,
  linesMatching,
  readRepoFile,
  section,
} from './markdown.js';
import { METACONTROLLER_BASE, readControllers, type ControllerObject } from './support.js';

const MARKDOWN = handWrittenMarkdown();
type Kind = 'DecoratorController' | 'CompositeController';

// --- controllers -------------------------------------------------------------------------------

const NUMBER_WORDS: Readonly<Record<string, number>> = {
  both: 2,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
};

/** Where a text states a number of controllers of a kind: "both DecoratorControllers", "5 CompositeControllers". */
function statedCounts(text: string): Array<{ kind: Kind; count: number; phrase: string }> {
  const pattern =
    /\b(both|two|three|four|five|six|seven|eight|\d+)\s+(Decorator|Composite)Controllers\b/gi;
  return [...text.matchAll(pattern)].map((match) => {
    const word = (match[1] as string).toLowerCase();
    return {
      kind: `${match[2] as string}Controller` as Kind,
      count: NUMBER_WORDS[word] ?? Number(word),
      phrase: match[0],
    };
  });
}

/** Where a text names a controller with its kind: "DecoratorController `kubecell-delivery`". */
function namedWithKind(text: string): Array<{ kind: Kind; name: string }> {
  const pattern = /\b(Decorator|Composite)Controllers?\s+`(kubecell-[a-z0-9-]+)`/g;
  return [...text.matchAll(pattern)].map((match) => ({
    kind: `${match[1] as string}Controller` as Kind,
    name: match[2] as string,
  }));
}

function countOf(controllers: readonly ControllerObject[], kind: Kind): number {
  return controllers.filter((controller) => controller.kind === kind).length;
}

// --- frozen Cell fields ------------------------------------------------------------------------

/**
 * An object every path of which leads to a new object: two of them differ in every field, so
 * the rule reports every field it freezes, whatever their names, and the test needs no copy of
 * the list (the rule's list itself is not exported).
 */
function differsEverywhere(): unknown {
  return new Proxy({}, { get: () => differsEverywhere() });
}

function frozenByTheRule(): string[] {
  return changedFrozenCellFields(differsEverywhere(), differsEverywhere()).map(
    (frozen) => frozen.field,
  );
}

/** The fields of security.md's bold sentence "A Cell's ... are frozen once a VirtualCluster ...". */
function frozenInSecurityDoc(): string[] {
  const text = section(readRepoFile('docs/security.md'), 3, 'Rules about other objects') ?? '';
  const sentence = /\*\*A Cell's ([^*]+?)\s+(?:is|are)\s+frozen\s+once[^*]*\*\*/.exec(text)?.[1];
  if (sentence === undefined) throw new Error('docs/security.md: no "A Cell\'s ... frozen once"');
  return backticked(sentence);
}

// --- body sizes --------------------------------------------------------------------------------

/** `<n> MB` for each body-size default `n mb` (read as MiB): a decimal size the code never means. */
function decimalBodySizes(): RegExp[] {
  return (['KUBECELL_BODY_LIMIT', 'KUBECELL_BODY_BUDGET'] as const).map((name) => {
    const mebibytes = (parseByteSize(DEFAULTS[name]) as number) / 2 ** 20;
    return new RegExp(`\\b${mebibytes}\\s?MB\\b`);
  });
}

// --- a VirtualCluster's ManifestWork ----------------------------------------------------------

/** How the docs name each kind a VirtualCluster's ManifestWork carries. */
const WORK_KIND_WORDS: Readonly<Record<string, RegExp>> = {
  Namespace: /\bNamespace\b/,
  NetworkPolicy: /\bNetworkPolicies\b/,
  ResourceQuota: /\bResourceQuota\b/,
  LimitRange: /\bLimitRange\b/,
  Cluster: /\bk3k Cluster\b/,
  Service: /\bService\b/,
  Role: /\bRole\b/,
  RoleBinding: /\b(RoleBinding|binding)\b/,
  ConfigMap: /\bConfigMap\b/,
};

/** The kinds of the objects in the ManifestWork of a placed VirtualCluster. */
function workKinds(): string[] {
  const { vc } = placedVirtualCluster();
  const resolved = vc.status?.resolved;
  if (!resolved) throw new Error('the fixture VirtualCluster is not resolved');
  const work = renderVirtualClusterWork(vc as DeliveredVirtualCluster, resolved, CONFIG);
  return [...new Set(work.spec.workload.manifests.map((manifest) => String(manifest.kind)))];
}

/** The paragraph of a doc's section that names the work `kubecell-vc-<uid>`. */
function workParagraph(file: string, level: number, title: string): string {
  const text = section(readRepoFile(file), level, title) ?? '';
  const paragraph = text.split(/\n\s*\n/).find((part) => part.includes('`kubecell-vc-<uid>`'));
  if (paragraph === undefined) throw new Error(`${file} "${title}": no paragraph names the work`);
  return paragraph;
}

/**
 * A command that installs KubeCell: an apply of one of its kustomizations, the image build, or
 * the global install of the `kubecell` package.
 */
const INSTALL_COMMAND = [
  /kubectl apply\b.*\s-k\s+\S*\b(manifests|metacontroller)\//,
  /\bdocker build\b/,
  /\bnpm\s+(install|i)\s+(-g|--global)\b/,
];
const INSTALL_DOC = 'docs/operations.md';

// --- the kubecell command ----------------------------------------------------------------------

/**
 * How a doc must not run the `kubecell` command (issue 26, must 3): from the source tree, which
 * only a clone with its node_modules can do, instead of the installed package; and
 * `kubecell kubeconfig` into a shell redirection, which creates the file with the umask where
 * `-o` writes it with mode 0600.
 */
const CLI_MISUSE = [
  /\bnpx\s+tsx\s+\S*hooks\/cli\/kubecell\.ts\b/,
  /hooks\/cli\/kubecell\.ts\s+(validate|kubeconfig|help|--help)\b/,
  /\bkubecell\s+kubeconfig\b[^#]*?\s1?>>?\s*[^\s&>]/,
];

describe('claims the docs make about the code', () => {
  describe('controllers (metacontroller/)', () => {
    const all = readControllers();

    it('(the checkers find counts and named kinds)', () => {
      expect(statedCounts('both DecoratorControllers, 5 CompositeControllers')).to.deep.equal([
        { kind: 'DecoratorController', count: 2, phrase: 'both DecoratorControllers' },
        { kind: 'CompositeController', count: 5, phrase: '5 CompositeControllers' },
      ]);
      expect(namedWithKind('the DecoratorController `kubecell-delivery` runs')).to.deep.equal([
        { kind: 'DecoratorController', name: 'kubecell-delivery' },
      ]);
      expect(countOf(all, 'DecoratorController')).to.be.greaterThan(0);
      expect(countOf(all, 'CompositeController')).to.be.greaterThan(0);
    });

    it('every number of DecoratorControllers or CompositeControllers a doc states is the shipped one', () => {
      const wrong = MARKDOWN.flatMap((file) =>
        statedCounts(readRepoFile(file))
          .filter(({ kind, count }) => count !== countOf(all, kind))
          .map(
            ({ kind, phrase }) =>
              `${file}: "${phrase}", metacontroller/ ships ${countOf(all, kind)} ${kind}s`,
          ),
      );
      expect(wrong).to.deep.equal([]);
    });

    it('every controller a doc names with its kind is shipped as that kind', () => {
      const shipped = new Map(all.map((controller) => [controller.name, controller.kind]));
      const wrong = MARKDOWN.flatMap((file) =>
        namedWithKind(readRepoFile(file))
          .filter(({ kind, name }) => shipped.get(name) !== kind)
          .map(
            ({ kind, name }) =>
              `${file}: ${kind} ${name}, shipped as ${shipped.get(name) ?? 'nothing'}`,
          ),
      );
      expect(wrong).to.deep.equal([]);
    });

    it("the quickstart's controllers after an install are exactly the base's", () => {
      // The expected output is a fenced block, which section() blanks: read the raw step.
      const text = readRepoFile('docs/quickstart.md');
      const start = text.indexOf('\n## 4. Check the install\n');
      expect(start, 'docs/quickstart.md has "## 4. Check the install"').to.be.greaterThan(-1);
      const step = text.slice(start, text.indexOf('\n## ', start + 1));
      const listed = [
        ...step.matchAll(
          /^(compositecontroller|decoratorcontroller)\.metacontroller\.k8s\.io\/(\S+)$/gm,
        ),
      ].map((match) => `${match[1] as string}/${match[2] as string}`);
      const base = readControllers(METACONTROLLER_BASE).map(
        (controller) => `${controller.kind.toLowerCase()}/${controller.name}`,
      );
      expect(listed.sort()).to.deep.equal(base.sort());
    });
  });

  it('the frozen Cell fields of docs/security.md are the admission rule’s', () => {
    const rule = frozenByTheRule();
    expect(rule, 'the rule freezes the placement fields').to.include('spec.machineProfile.name');
    expect([...frozenInSecurityDoc()].sort()).to.deep.equal([...rule].sort());
  });

  it('no doc states a body-size default in decimal megabytes (the code reads `64mb` as 64 MiB)', () => {
    const patterns = decimalBodySizes();
    const limit = (parseByteSize(DEFAULTS.KUBECELL_BODY_LIMIT) as number) / 2 ** 20;
    expect(patterns.some((pattern) => pattern.test(`a ${limit} MB body`))).to.equal(true);
    expect(
      patterns.some((pattern) => pattern.test(`a ${limit} MiB body, \`${limit}mb\``)),
    ).to.equal(false);
    expect(linesMatching(MARKDOWN, patterns)).to.deep.equal([]);
  });

  it("docs/concepts.md and docs/remote-cells.md name every kind of a VirtualCluster's ManifestWork", () => {
    const kinds = workKinds();
    expect(kinds).to.include('Cluster');
    expect(
      kinds.filter((kind) => WORK_KIND_WORDS[kind] === undefined),
      'words for',
    ).to.deep.equal([]);
    for (const [file, level, title] of [
      ['docs/concepts.md', 3, 'On a ManifestWork Cell'],
      ['docs/remote-cells.md', 2, 'A VirtualCluster on it'],
    ] as const) {
      const paragraph = workParagraph(file, level, title);
      const missing = kinds.filter((kind) => !(WORK_KIND_WORDS[kind] as RegExp).test(paragraph));
      expect(missing, `${file} "${title}" leaves out`).to.deep.equal([]);
    }
  });

  it("docs/networking.md: the k3k Cluster's tlsSANs holds only the endpoint address", () => {
    const { vc, localChildren } = placedVirtualCluster({ delivery: 'Local' });
    const cluster = localChildren.find((child) => child.kind === 'Cluster');
    const spec = ((cluster as { spec?: { tlsSANs?: unknown } } | undefined)?.spec ?? {}) as {
      tlsSANs?: unknown;
    };
    const endpoint = vc.status?.resolved?.endpointAddress;
    expect(endpoint, 'the fixture is placed').to.be.a('string');
    expect(spec.tlsSANs).to.deep.equal([endpoint]);
    const text =
      section(readRepoFile('docs/networking.md'), 2, 'NodePorts and VirtualCluster endpoints') ??
      '';
    expect(text.replace(/\s+/g, ' ')).to.include('`tlsSANs` holds only that address');
  });

  describe('the kubecell command', () => {
    it('(the checker finds a run from the source tree and a redirected kubeconfig)', () => {
      const misused = (line: string): boolean => CLI_MISUSE.some((pattern) => pattern.test(line));
      for (const line of [
        'npx tsx hooks/cli/kubecell.ts kubeconfig team -n team-a -o team.kubeconfig',
        'kustomize build . | npx tsx ./hooks/cli/kubecell.ts validate -f -',
        './hooks/cli/kubecell.ts validate -f samples/',
        'kubecell kubeconfig team-a -n tenant-a > team-a.kubeconfig    # the tenant',
        'kubectl kubecell kubeconfig team -n team-a >>all.kubeconfig',
      ]) {
        expect(misused(line), line).to.equal(true);
      }
      for (const line of [
        'kubecell kubeconfig team -n team-a -o team.kubeconfig   # or: kubectl kubecell ...',
        '`kubecell kubeconfig <name> -n <namespace> [-o <file>]` prints (or writes, mode 0600)',
        'kubecell validate -f samples/ > report.txt',
        '#### Command line (`hooks/cli/kubecell.ts`)',
      ]) {
        expect(misused(line), line).to.equal(false);
      }
    });

    it('every doc runs the installed `kubecell`, and writes a kubeconfig with -o', () => {
      expect(linesMatching(MARKDOWN, CLI_MISUSE)).to.deep.equal([]);
    });
  });

  it(`install commands are given in ${INSTALL_DOC} only`, () => {
    expect(
      linesMatching([INSTALL_DOC], INSTALL_COMMAND),
      'the commands are there',
    ).to.not.deep.equal([]);
    const elsewhere = MARKDOWN.filter((file) => file !== INSTALL_DOC);
    expect(linesMatching(elsewhere, INSTALL_COMMAND)).to.deep.equal([]);
  });
});
