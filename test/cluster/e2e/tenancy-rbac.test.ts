// Tenant onboarding through the real stack, as docs/tenants.md tells a platform team to do it:
// a team's user, alice, gets a RoleBinding to the built-in `edit` ClusterRole in one host
// namespace, and a ClusterRoleBinding to kubecell-cells-classes-viewer; nothing else. KubeCell's
// rules reach `edit` only through aggregation (manifests/rbac/tenant-roles.yaml, applied with
// the rest of manifests/rbac/ by the stack), done by kube-controller-manager's
// clusterrole-aggregation controller. With her own kubeconfig (a client certificate, no groups),
// alice then creates a plan and a VirtualCluster there, which KubeCell evaluates and makes Ready
// through Metacontroller (k3k and the Cell's world are simulated, harness/simulate/); she reads the
// published kubeconfig Secret and runs `kubecell kubeconfig`. She cannot do any of it in another
// host namespace, cannot write Cells, classes or a VirtualCluster's status. A second user, bob,
// bound to `view`, reads the VirtualCluster but not its kubeconfig, and the CLI says which
// permission he lacks. Every refusal checked is the apiserver's RBAC, not the admission webhook's
// (both namespaces are host namespaces).
import { expect } from 'chai';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { repoRoot } from '../../../harness/cluster/paths.js';
import { runCommand, type CommandResult } from '../../../harness/cluster/processes.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import {
  CELL,
  CELL_NAMESPACE,
  createHostNamespace,
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
  describeStatus,
  eventuallyConcluded,
  eventuallyGone,
  kubectl,
  type ObjectWithStatus,
  uniqueName,
  watching,
} from './support.js';

const PLANS = 'virtualclusterplans.kubecell.io';
const CLI = path.join(repoRoot, 'hooks', 'cli', 'kubecell.ts');
const FORBIDDEN = /forbidden/i;

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
}

/** Whether a ClusterRole's rules grant `verb` on `resource` in kubecell.io. */
function grants(rules: readonly Rule[], resource: string, verb: string): boolean {
  return rules.some(
    (rule) =>
      (rule.apiGroups ?? []).includes('kubecell.io') &&
      (rule.resources ?? []).includes(resource) &&
      (rule.verbs ?? []).includes(verb),
  );
}

async function clusterRoleRules(stack: KubeCellStack, name: string): Promise<Rule[]> {
  const role = JSON.parse(await kubectl(stack, ['get', 'clusterrole', name, '-o', 'json'])) as {
    rules?: Rule[] | null;
  };
  return role.rules ?? [];
}

describe('e2e: tenant onboarding, a tenant bound to the built-in edit role', function () {
  this.timeout(180_000);
  let stack: KubeCellStack;
  let cell: ReadyCell | undefined;
  let alice: string;
  let bob: string;
  let carol: string;
  const home = mkdtempSync(path.join(tmpdir(), 'kubecell-tenancy-'));
  const team = uniqueName('e2e-tenant-a');
  const other = uniqueName('e2e-tenant-b');
  const klass = uniqueName('e2e-tenancy-class');
  const cellName = uniqueName('e2e-tenancy-cell');
  const catalogBinding = uniqueName('e2e-tenancy-cells-classes');
  const vcName = 'team';
  const planName = 'will-it-fit';

  /** kubectl with a user's own kubeconfig; never throws. */
  function kubectlAs(kubeconfig: string, args: readonly string[], input?: string) {
    return runCommand(
      stack.cluster.binaries.kubectl,
      [`--kubeconfig=${kubeconfig}`, `--cache-dir=${path.join(home, 'kubectl-cache')}`, ...args],
      input === undefined ? {} : { input },
    );
  }

  async function kubectlAsOk(kubeconfig: string, args: readonly string[], input?: string) {
    const result = await kubectlAs(kubeconfig, args, input);
    if (result.code !== 0) {
      throw new Error(`kubectl ${args.join(' ')} as a tenant failed:\n${result.stderr}`);
    }
    return result.stdout;
  }

  /** The object as the user reads it. */
  async function getAs(kubeconfig: string, resource: string, name: string, namespace?: string) {
    const text = await kubectlAsOk(kubeconfig, [
      'get',
      resource,
      name,
      ...(namespace ? ['-n', namespace] : []),
      '-o',
      'json',
    ]);
    return JSON.parse(text) as ObjectWithStatus;
  }

  /** `kubecell kubeconfig <args>` as a program, with KUBECONFIG set to the user's kubeconfig. */
  function cli(kubeconfig: string, args: readonly string[]): Promise<CommandResult> {
    return runCommand(process.execPath, ['--import', 'tsx', CLI, 'kubeconfig', ...args], {
      cwd: repoRoot,
      env: { ...process.env, KUBECONFIG: kubeconfig, HOME: home },
      timeoutMs: 60_000,
    });
  }

  function expectForbidden(result: CommandResult, what: string, pattern?: RegExp): void {
    expect(result.code, `${what} must be refused; it was allowed:\n${result.stdout}`).to.not.equal(
      0,
    );
    expect(result.stderr, what).to.match(FORBIDDEN);
    if (pattern) expect(result.stderr, what).to.match(pattern);
  }

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    cell = await startReadyCell(stack, cellName);
    await apply(stack, virtualNodeClassManifest(klass, GPU_CLASS_QUOTA), 'e2e-platform');
    await createHostNamespace(stack, team);
    await createHostNamespace(stack, other);

    // What docs/tenants.md has the platform team do, and nothing more.
    const users = { userName: 'alice', groups: [] };
    alice = await stack.cluster.kubeconfigFor(users);
    bob = await stack.cluster.kubeconfigFor({ userName: 'bob', groups: [] });
    carol = await stack.cluster.kubeconfigFor({ userName: 'carol', groups: [] });
    await kubectl(stack, [
      'create',
      'rolebinding',
      'team-edit',
      '--clusterrole=edit',
      '--user=alice',
      '-n',
      team,
    ]);
    await kubectl(stack, [
      'create',
      'rolebinding',
      'team-view',
      '--clusterrole=view',
      '--user=bob',
      '-n',
      team,
    ]);
    await kubectl(stack, [
      'create',
      'clusterrolebinding',
      catalogBinding,
      '--clusterrole=kubecell-cells-classes-viewer',
      '--user=alice',
    ]);
    // The narrower setup of docs/tenants.md: the shipped role itself, and reading Secrets.
    await kubectl(stack, [
      'create',
      'rolebinding',
      'team-virtualclusters',
      '--clusterrole=kubecell-aggregate-to-edit',
      '--user=carol',
      '-n',
      team,
    ]);
    await kubectl(stack, [
      'create',
      'role',
      'kubeconfig-reader',
      '--verb=get',
      '--resource=secrets',
      '-n',
      team,
    ]);
    await kubectl(stack, [
      'create',
      'rolebinding',
      'team-kubeconfig',
      '--role=kubeconfig-reader',
      '--user=carol',
      '-n',
      team,
    ]);
    // The aggregation controller fills edit within a moment of the roles' appearance.
    await poll(
      "KubeCell's rules aggregated into the built-in edit role",
      async () =>
        grants(await clusterRoleRules(stack, 'edit'), 'virtualclusters', 'create')
          ? { value: true }
          : { notYet: 'edit has no rule for virtualclusters.kubecell.io yet' },
      watching(stack),
    );
  });

  after(async function () {
    this.timeout(240_000);
    if (!stack) return;
    for (const namespace of [team, other]) {
      await stack.cluster.kubectl(['delete', VC, '--all', '-n', namespace, '--wait=false']);
      await stack.cluster.kubectl(['delete', PLANS, '--all', '-n', namespace, '--wait=false']);
    }
    for (const namespace of [team, other]) {
      await poll(
        `no VirtualCluster left in ${namespace}`,
        async () => {
          const left = await stack.cluster.kubectl(['get', VC, '-n', namespace, '-o', 'name']);
          return left.stdout.trim() === '' ? { value: true } : { notYet: left.stdout.trim() };
        },
        watching(stack),
      );
    }
    await cell?.stop();
    await stack.cluster.kubectl(['delete', 'namespace', team, other, '--wait=false']);
    await stack.cluster.kubectl(['delete', VNCLASS, klass, '--wait=false']);
    await stack.cluster.kubectl(['delete', 'clusterrolebinding', catalogBinding]);
  });

  it('the built-in view, edit and admin roles carry the shipped rules (aggregated)', async function () {
    const [view, edit, admin] = await Promise.all(
      ['view', 'edit', 'admin'].map((name) => clusterRoleRules(stack, name)),
    );
    for (const resource of ['virtualclusters', 'virtualclusterplans']) {
      expect(grants(view!, resource, 'get'), `view: get ${resource}`).to.equal(true);
      expect(grants(view!, resource, 'create'), `view: create ${resource}`).to.equal(false);
      for (const verb of ['create', 'update', 'patch', 'delete']) {
        expect(grants(edit!, resource, verb), `edit: ${verb} ${resource}`).to.equal(true);
        expect(grants(admin!, resource, verb), `admin: ${verb} ${resource}`).to.equal(true);
      }
    }
    // Cells and classes are never aggregated; nor is writing a status.
    for (const rules of [view!, edit!, admin!]) {
      for (const resource of ['cells', 'virtualnodeclasses', 'gpucellpools']) {
        expect(grants(rules, resource, 'get'), resource).to.equal(false);
      }
      expect(grants(rules, 'virtualclusters/status', 'update')).to.equal(false);
    }
  });

  it('alice reads which Cells and classes exist, and may change none of them', async function () {
    const cells = await kubectlAsOk(alice, ['get', CELL, '-n', CELL_NAMESPACE, '-o', 'name']);
    expect(cells).to.include(`cell.kubecell.io/${cellName}`);
    const classes = await kubectlAsOk(alice, ['get', VNCLASS, '-o', 'name']);
    expect(classes).to.include(`virtualnodeclass.kubecell.io/${klass}`);

    // Server-side dry-runs: authorized exactly like the real request, and nothing is changed
    // should one be allowed after all.
    const dry = '--dry-run=server';
    const newCell = JSON.stringify({
      apiVersion: 'kubecell.io/v1alpha1',
      kind: 'Cell',
      metadata: { name: uniqueName('alice-cell'), namespace: CELL_NAMESPACE },
      spec: { managedClusterRef: { name: 'x' }, machineProfile: { name: 'x' } },
    });
    const label = (...target: string[]) => ['label', ...target, 'example.com/by=alice', dry];
    const refusals: Array<[string, Promise<CommandResult>]> = [
      ['create a Cell', kubectlAs(alice, ['create', dry, '-f', '-'], newCell)],
      ['label a Cell', kubectlAs(alice, [...label(CELL, cellName, '-n', CELL_NAMESPACE)])],
      ['delete a Cell', kubectlAs(alice, ['delete', dry, CELL, cellName, '-n', CELL_NAMESPACE])],
      [
        'create a class',
        kubectlAs(
          alice,
          ['create', dry, '-f', '-'],
          JSON.stringify(virtualNodeClassManifest(uniqueName('alice-class'), GPU_CLASS_QUOTA)),
        ),
      ],
      ['label a class', kubectlAs(alice, label(VNCLASS, klass))],
      ['delete a class', kubectlAs(alice, ['delete', dry, VNCLASS, klass])],
      ['list GPUCellPools', kubectlAs(alice, ['get', 'gpucellpools.kubecell.io'])],
    ];
    for (const [what, result] of refusals) expectForbidden(await result, what);
  });

  it('alice creates a plan in her namespace and reads KubeCell’s answer', async function () {
    await kubectlAsOk(
      alice,
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualClusterPlan',
        metadata: { name: planName, namespace: team },
        spec: { cellRef: { name: cellName }, classRef: { name: klass } },
      }),
    );
    const plan = await eventuallyConcluded(stack, planName, team, () =>
      getAs(alice, PLANS, planName, team),
    );
    expect((plan.status as { decision?: string }).decision, describeStatus(plan)).to.equal(
      'Accepted',
    );
  });

  it('alice creates a VirtualCluster there, reads its kubeconfig Secret, and `kubecell kubeconfig` prints it', async function () {
    await kubectlAsOk(
      alice,
      ['create', '-f', '-'],
      JSON.stringify(virtualClusterManifest(team, vcName, { cell: cellName, klass: klass })),
    );
    const vc = await poll<ObjectWithStatus>(
      `VirtualCluster ${team}/${vcName} Ready (read by alice)`,
      async () => {
        const seen = await getAs(alice, VC, vcName, team);
        return seen.status?.phase === 'Ready' ? { value: seen } : { notYet: describeStatus(seen) };
      },
      watching(stack, 120_000),
    );
    const secretName = (vc.status?.['credential'] as { secretName?: string } | undefined)
      ?.secretName;
    expect(secretName, 'status.credential.secretName').to.be.a('string');

    const secret = await getAs(alice, 'secret', secretName!, team);
    const published = Buffer.from(secret.data?.['kubeconfig.yaml'] ?? '', 'base64').toString(
      'utf8',
    );
    expect(published).to.match(/^apiVersion: "v1"$/m);
    const endpoint = vc.status?.['endpoint'] as { address: string; port: number };
    expect(published).to.include(`https://${endpoint.address}:${endpoint.port}`);

    const printed = await cli(alice, [vcName, '-n', team]);
    expect(printed.code, printed.stderr).to.equal(0);
    expect(printed.stderr).to.equal('');
    expect(printed.stdout).to.equal(published);

    const file = path.join(home, 'team.kubeconfig');
    const written = await cli(alice, [vcName, '-n', team, '-o', file]);
    expect(written.code, written.stderr).to.equal(0);
    expect(written.stdout).to.equal('');
    expect(readFileSync(file, 'utf8')).to.equal(published);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
  });

  it('alice cannot create, read or run the CLI in another host namespace', async function () {
    const refusals: Array<[string, Promise<CommandResult>]> = [
      [
        'create a plan in another namespace',
        kubectlAs(
          alice,
          ['create', '--dry-run=server', '-f', '-'],
          JSON.stringify({
            apiVersion: 'kubecell.io/v1alpha1',
            kind: 'VirtualClusterPlan',
            metadata: { name: planName, namespace: other },
            spec: { cellRef: { name: cellName }, classRef: { name: klass } },
          }),
        ),
      ],
      [
        'create a VirtualCluster in another namespace',
        kubectlAs(
          alice,
          ['create', '--dry-run=server', '-f', '-'],
          JSON.stringify(virtualClusterManifest(other, vcName, { cell: cellName, klass: klass })),
        ),
      ],
      ['list VirtualClusters there', kubectlAs(alice, ['get', VC, '-n', other])],
      ['list VirtualClusters everywhere', kubectlAs(alice, ['get', VC, '-A'])],
      ['list Secrets there', kubectlAs(alice, ['get', 'secrets', '-n', other])],
    ];
    for (const [what, result] of refusals) {
      expectForbidden(await result, what, /User "alice" cannot (create|list) resource/);
    }

    const elsewhere = await cli(alice, [vcName, '-n', other]);
    expect(elsewhere.code).to.equal(1);
    expect(elsewhere.stdout).to.equal('');
    expect(elsewhere.stderr).to.include(
      `kubecell: forbidden: you may not get virtualclusters.kubecell.io in namespace ${other}`,
    );
  });

  it('alice cannot write the status KubeCell reports', async function () {
    const patched = await kubectlAs(alice, [
      'patch',
      VC,
      vcName,
      '-n',
      team,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Ready"}}',
      '--dry-run=server',
    ]);
    expectForbidden(patched, 'patch the status', /virtualclusters\/status/);
  });

  it('bob, bound to view, reads the VirtualCluster but not its kubeconfig, and the CLI says why', async function () {
    const vc = await getAs(bob, VC, vcName, team);
    expect(vc.status?.phase).to.equal('Ready');
    expectForbidden(
      await kubectlAs(bob, ['delete', '--dry-run=server', VC, vcName, '-n', team]),
      'delete as a viewer',
    );
    const denied = await cli(bob, [vcName, '-n', team]);
    expect(denied.code).to.equal(1);
    expect(denied.stdout).to.equal('');
    expect(denied.stderr).to.include(
      `kubecell: forbidden: you may not get secrets in namespace ${team}`,
    );
    expect(denied.stderr).to.include('which the built-in ClusterRoles edit and admin grant');
    expect(denied.stderr).to.include(
      `The API server said: secrets "${(vc.status?.['credential'] as { secretName: string }).secretName}" is forbidden: User "bob" cannot get resource "secrets"`,
    );
  });

  it('carol, bound to the shipped role and a Secret reader only, takes the kubeconfig and nothing of the namespace', async function () {
    const printed = await cli(carol, [vcName, '-n', team]);
    expect(printed.code, printed.stderr).to.equal(0);
    const secretName = (
      (await getAs(carol, VC, vcName, team)).status?.['credential'] as { secretName: string }
    ).secretName;
    const secret = await getAs(carol, 'secret', secretName, team);
    expect(printed.stdout).to.equal(
      Buffer.from(secret.data?.['kubeconfig.yaml'] ?? '', 'base64').toString('utf8'),
    );
    const pod = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'carol', namespace: team },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    });
    const refusals: Array<[string, Promise<CommandResult>]> = [
      ['create a pod', kubectlAs(carol, ['create', '--dry-run=server', '-f', '-'], pod)],
      ['list secrets', kubectlAs(carol, ['get', 'secrets', '-n', team])],
      [
        'delete a NetworkPolicy',
        kubectlAs(carol, ['delete', '--dry-run=server', 'networkpolicies', '--all', '-n', team]),
      ],
      ['get VirtualClusters elsewhere', kubectlAs(carol, ['get', VC, '-n', other])],
    ];
    for (const [what, result] of refusals) expectForbidden(await result, what);
  });

  it('alice deletes her VirtualCluster and plan', async function () {
    await kubectlAsOk(alice, ['delete', VC, vcName, '-n', team, '--wait=false']);
    await kubectlAsOk(alice, ['delete', PLANS, planName, '-n', team, '--wait=false']);
    await eventuallyGone(stack, VC, vcName, team, 120_000);
    await eventuallyGone(stack, PLANS, planName, team);
  });
});
