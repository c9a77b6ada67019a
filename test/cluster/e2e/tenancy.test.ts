// Which namespaces may use which Cells and VirtualNodeClasses (spec.namespaceSelector), through
// the real apiserver and Metacontroller. A platform restricts a Ready Cell to two host namespaces
// by name and a "gold" class to the namespaces labelled example.com/tier=gold. Then:
//
//   - with the admission webhook (the shared KubeCell), a plan or VirtualCluster naming them from
//     a namespace a selector does not select is refused at apply time, naming the selector; from
//     a namespace both select, the plan is Accepted and the VirtualCluster becomes Ready;
//   - without the webhook (a KubeCell of its own, `webhook: false`: the way a cluster behaves
//     while the webhook configuration is deleted, or for objects created before the selector
//     was set), the same VirtualCluster is created, and the feasibility evaluation keeps it
//     Pending with the check NamespaceAllowed (reason NamespaceNotAllowed) naming the rule,
//     until the platform labels the namespace.
//
// The host-namespace baseline of the same namespaces shows findings 6a and 6b of issue 15: the
// API policy opens 6443 only on k3k's own server pods and only to the k3k controller's namespace
// and the API client CIDRs, and a weaker Pod Security label set by hand is reported.
//
// The Cells stand on a simulated OCM cluster, simulated Nodes and a simulated k3k
// (harness/simulate/); every status is written by Metacontroller calling KubeCell's hooks.
import { expect } from 'chai';
import { startKubeCellStack, type KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import {
  CELL,
  CELL_NAMESPACE,
  GPU_CLASS_QUOTA,
  startReadyCell,
  VC,
  VNCLASS,
  type ReadyCell,
} from './cell-fixtures.js';
import { virtualClusterManifest, virtualNodeClassManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  conditionOf,
  describeStatus,
  eventuallyConcluded,
  eventuallyPhase,
  getObject,
  kubectl,
  listObjects,
  type ObjectWithStatus,
  uniqueName,
  watching,
} from './support.js';

const PLANS = 'virtualclusterplans.kubecell.io';
const TIER = 'example.com/tier';

interface Check {
  name: string;
  result: string;
  reason: string;
  message?: string;
}

function checksOf(object: ObjectWithStatus | undefined, field: string): Check[] {
  return (object?.status?.[field] ?? []) as Check[];
}

function plan(namespace: string, name: string, cell: string, klass: string): unknown {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualClusterPlan',
    metadata: { name, namespace },
    spec: { cellRef: { name: cell }, classRef: { name: klass } },
  };
}

/** A host namespace, with labels of the platform's own. */
async function hostNamespace(
  stack: KubeCellStack,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  await apply(
    stack,
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'kubecell.io/host-namespace': 'true', ...labels } },
    },
    'e2e-platform',
  );
}

/** The gold class: only namespaces labelled example.com/tier=gold may use it. */
function goldClass(name: string): unknown {
  const cls = virtualNodeClassManifest(name, GPU_CLASS_QUOTA);
  return {
    ...cls,
    spec: { ...(cls.spec as object), namespaceSelector: { matchLabels: { [TIER]: 'gold' } } },
  };
}

/** Restricts the Cell to these namespaces, by the label every Namespace carries. */
async function restrictCell(stack: KubeCellStack, cell: string, namespaces: string[]) {
  await kubectl(stack, [
    'patch',
    CELL,
    cell,
    '-n',
    CELL_NAMESPACE,
    '--type=merge',
    '-p',
    JSON.stringify({
      spec: {
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'In', values: namespaces },
          ],
        },
      },
    }),
  ]);
}

/** `kubectl apply` that must be refused; returns kubectl's error output. */
async function refusedApply(stack: KubeCellStack, object: unknown): Promise<string> {
  const result = await stack.cluster.kubectl(
    ['apply', '--server-side', '--field-manager=e2e-tenant', '-f', '-'],
    { input: JSON.stringify(object) },
  );
  expect(result.code, `expected a refusal, got: ${result.stdout}`).to.not.equal(0);
  return result.stderr;
}

describe('e2e: namespaceSelector of Cells and classes, with the admission webhook', function () {
  this.timeout(180_000);
  let stack: KubeCellStack;
  let cell: ReadyCell | undefined;
  const gold = uniqueName('e2e-ten-gold');
  const open = uniqueName('e2e-ten-open');
  const allowed = uniqueName('e2e-ten-allowed');
  const plain = uniqueName('e2e-ten-plain');
  const outsider = uniqueName('e2e-ten-outsider');

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    cell = await startReadyCell(stack, uniqueName('e2e-ten-cell'));
    await restrictCell(stack, cell.name, [allowed, plain]);
    await hostNamespace(stack, allowed, { [TIER]: 'gold' });
    await hostNamespace(stack, plain);
    await hostNamespace(stack, outsider, { [TIER]: 'gold' });
    await apply(
      stack,
      [goldClass(gold), virtualNodeClassManifest(open, GPU_CLASS_QUOTA)],
      'e2e-platform',
    );
  });

  after(async function () {
    this.timeout(240_000);
    if (!cell) return;
    for (const namespace of [allowed, plain, outsider]) {
      await stack.cluster.kubectl(['delete', VC, '--all', '-n', namespace, '--wait=false']);
    }
    await poll(
      'no VirtualCluster left',
      async () => {
        const left = (await listObjects(stack, VC)).filter((vc) =>
          [allowed, plain, outsider].includes(vc.metadata.namespace ?? ''),
        );
        return left.length === 0 ? { value: true } : { notYet: `${left.length} left` };
      },
      watching(stack),
    );
    await cell.stop();
    for (const namespace of [allowed, plain, outsider]) {
      await stack.cluster.kubectl(['delete', 'namespace', namespace, '--wait=false']);
    }
    await stack.cluster.kubectl(['delete', VNCLASS, gold, open, '--wait=false']);
  });

  it("refuses a plan and a VirtualCluster the class's selector does not admit, naming the rule", async function () {
    const cellName = cell!.name;
    const planError = await refusedApply(stack, plan(plain, 'gold-plan', cellName, gold));
    // The webhook's 422 with field causes, which kubectl prints as its own validation errors.
    expect(planError).to.contain('The VirtualClusterPlan "gold-plan" is invalid:');
    expect(planError).to.contain(
      `spec.classRef.name: Forbidden: namespace "${plain}" may not use VirtualNodeClass "${gold}": ` +
        `the VirtualNodeClass's spec.namespaceSelector (${TIER}=gold) does not select it`,
    );
    const vcError = await refusedApply(
      stack,
      virtualClusterManifest(plain, 'team', { cell: cellName, klass: gold }),
    );
    expect(vcError).to.contain(`may not use VirtualNodeClass "${gold}"`);
    expect(await getObject(stack, PLANS, 'gold-plan', plain)).to.equal(undefined);
    expect(await getObject(stack, VC, 'team', plain)).to.equal(undefined);
  });

  it("refuses a VirtualCluster the Cell's selector does not admit, even with an open class", async function () {
    const error = await refusedApply(
      stack,
      virtualClusterManifest(outsider, 'team', { cell: cell!.name, klass: open }),
    );
    expect(error).to.contain(
      `spec.cellRef.name: Forbidden: namespace "${outsider}" may not use Cell "${cell!.name}": ` +
        `the Cell's spec.namespaceSelector (kubernetes.io/metadata.name in (${allowed},${plain})) ` +
        'does not select it',
    );
    expect(error).to.not.contain('spec.classRef.name');
  });

  it('accepts plans from a namespace the selectors admit, reporting NamespaceAllowed', async function () {
    await apply(
      stack,
      [plan(allowed, 'gold-plan', cell!.name, gold), plan(plain, 'open-plan', cell!.name, open)],
      'e2e-tenant',
    );
    const goldPlan = await eventuallyConcluded(stack, 'gold-plan', allowed);
    expect(goldPlan.status?.['decision'], JSON.stringify(goldPlan.status)).to.equal('Accepted');
    const checks = checksOf(goldPlan, 'checks');
    expect(checks.map((check) => check.name).slice(0, 3)).to.deep.equal([
      'CellFound',
      'ClassFound',
      'NamespaceAllowed',
    ]);
    expect(checks[2]).to.include({ result: 'Pass', reason: 'NamespaceAllowed' });
    expect(checks[2]?.message).to.equal(
      `Namespace ${allowed} is selected by the namespaceSelector of Cell ${cell!.name} ` +
        `(kubernetes.io/metadata.name in (${allowed},${plain})) and the namespaceSelector of ` +
        `VirtualNodeClass ${gold} (${TIER}=gold).`,
    );
    const openPlan = await eventuallyConcluded(stack, 'open-plan', plain);
    expect(openPlan.status?.['decision']).to.equal('Accepted');
  });

  it('makes a VirtualCluster Ready in a namespace the selectors admit', async function () {
    this.timeout(240_000);
    await apply(
      stack,
      virtualClusterManifest(allowed, 'team', { cell: cell!.name, klass: gold }),
      'e2e-tenant',
    );
    const vc = await eventuallyPhase(stack, VC, 'team', allowed, 'Ready', 180_000);
    expect(checksOf(vc, 'feasibilityChecks').find((c) => c.name === 'NamespaceAllowed')).to.include(
      { result: 'Pass', reason: 'NamespaceAllowed' },
    );
  });

  it("gives the namespaces the v2 baseline: 6443 open only on k3k's server pods, weaker Pod Security reported", async function () {
    const policy = await poll<ObjectWithStatus>(
      `kubecell-allow-api-server v2 in ${plain}`,
      async () => {
        const object = await getObject(stack, 'networkpolicy', 'kubecell-allow-api-server', plain);
        return object?.metadata.labels?.['kubecell.io/baseline'] === 'v2'
          ? { value: object }
          : { notYet: JSON.stringify(object?.metadata.labels) };
      },
      watching(stack),
    );
    expect(policy.spec?.['podSelector']).to.deep.equal({
      matchLabels: { role: 'server' },
      matchExpressions: [
        { key: 'cluster', operator: 'Exists' },
        { key: 'k3k.io/clusterName', operator: 'DoesNotExist' },
      ],
    });
    expect(policy.spec?.['ingress']).to.deep.equal([
      {
        from: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'k3k-system' } } },
          { ipBlock: { cidr: '0.0.0.0/0' } },
          { ipBlock: { cidr: '::/0' } },
        ],
        ports: [{ protocol: 'TCP', port: 6443 }],
      },
    ]);

    await kubectl(stack, [
      'label',
      'namespace',
      plain,
      'pod-security.kubernetes.io/enforce=privileged',
      '--overwrite',
    ]);
    const annotations = await poll<Record<string, string>>(
      `pod-security-weaker on ${plain}`,
      async () => {
        const object = await getObject(stack, 'namespace', plain);
        const found = object?.metadata.annotations ?? {};
        return found['kubecell.io/pod-security-weaker'] !== undefined
          ? { value: found }
          : { notYet: JSON.stringify(found) };
      },
      watching(stack),
    );
    expect(annotations).to.include({
      'kubecell.io/baseline': 'v2',
      'kubecell.io/pod-security-kept': 'enforce=privileged',
      'kubecell.io/pod-security-weaker': 'enforce=privileged',
    });
  });
});

describe('e2e: namespaceSelector without the admission webhook (feasibility evaluation)', function () {
  this.timeout(180_000);
  let stack: KubeCellStack | undefined;
  let cell: ReadyCell | undefined;
  let failed = false;
  const gold = uniqueName('e2e-nowh-gold');
  const plain = uniqueName('e2e-nowh-plain');

  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await startKubeCellStack({ webhook: false, provisioners: [] });
    cell = await startReadyCell(stack, uniqueName('e2e-nowh-cell'));
    await hostNamespace(stack, plain);
    await apply(stack, goldClass(gold), 'e2e-platform');
  });

  after(async function () {
    this.timeout(120_000);
    try {
      await cell?.simulation.stop();
    } finally {
      await stack?.stop({ keepLogs: failed });
    }
  });

  it('a VirtualCluster the class refuses is created, and stays Pending with NamespaceNotAllowed', async function () {
    const s = stack!;
    await apply(
      s,
      virtualClusterManifest(plain, 'team', { cell: cell!.name, klass: gold }),
      'e2e-tenant',
    );
    await apply(s, plan(plain, 'gold-plan', cell!.name, gold), 'e2e-tenant');
    const vc = await poll<ObjectWithStatus>(
      `${plain}/team evaluated`,
      async () => {
        const object = await getObject(s, VC, 'team', plain);
        return checksOf(object, 'feasibilityChecks').length > 0
          ? { value: object! }
          : { notYet: describeStatus(object) };
      },
      watching(s),
    );
    expect(vc.status?.phase).to.equal('Pending');
    expect(vc.status?.['resolved']).to.equal(undefined);
    const failing = checksOf(vc, 'feasibilityChecks').filter((check) => check.result !== 'Pass');
    // Everything else passes: the selector alone keeps it Pending.
    expect(failing.map((check) => [check.name, check.result, check.reason])).to.deep.equal([
      ['NamespaceAllowed', 'Fail', 'NamespaceNotAllowed'],
    ]);
    expect(failing[0]?.message).to.equal(
      `Namespace ${plain} is not allowed by the namespaceSelector of VirtualNodeClass ${gold} ` +
        `(${TIER}=gold): the platform team restricts which namespaces may use VirtualNodeClass ` +
        `${gold}. Use a Cell and a VirtualNodeClass whose namespaceSelector selects ${plain}, or ` +
        'ask the platform team to label the namespace or widen the selector.',
    );
    expect(conditionOf(vc, 'Feasible')).to.include({ status: 'False', reason: 'Rejected' });
    expect(conditionOf(vc, 'Resolved')).to.include({
      status: 'False',
      reason: 'FeasibilityRejected',
    });
    expect(await getObject(s, 'clusters.k3k.io', 'team', plain)).to.equal(undefined);

    const rejected = await eventuallyConcluded(s, 'gold-plan', plain);
    expect(rejected.status?.['decision']).to.equal('Rejected');
    expect(
      checksOf(rejected, 'checks').find((check) => check.name === 'NamespaceAllowed'),
    ).to.include({ result: 'Fail', reason: 'NamespaceNotAllowed' });
  });

  it('once the platform labels the namespace, the same VirtualCluster resolves and becomes Ready', async function () {
    this.timeout(240_000);
    const s = stack!;
    await kubectl(s, ['label', 'namespace', plain, `${TIER}=gold`]);
    const vc = await eventuallyPhase(s, VC, 'team', plain, 'Ready', 180_000);
    expect(vc.status?.['resolved']).to.not.equal(undefined);
    expect(
      checksOf(vc, 'feasibilityChecks').find((check) => check.name === 'NamespaceAllowed'),
    ).to.include({ result: 'Pass' });
  });
});
