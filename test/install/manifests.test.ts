// The install manifests agree with each other and with the code: nothing under manifests/ or
// metacontroller/ is left out of its kustomization (the base, or a GPUCellPool component), every hook URL reaches a registered hook
// through the Service and the container port the server listens on, the webhook
// configurations reach the HTTPS port, and the Deployment runs the way DESIGN.md asks
// (non-root, read-only root filesystem, probes, TLS Secret). Unit test: no cluster.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { WEBHOOK_DEFAULTS } from '../../hooks/admission/config.js';
import { DEFAULTS } from '../../hooks/server/config.js';
import { registerControllers } from '../../hooks/controllers/register.js';
import { HookRegistry } from '../../hooks/server/registry.js';
import {
  GPUCELLPOOL_COMPONENTS,
  HOOK_URL,
  METACONTROLLER_BASE,
  METACONTROLLER_INSTALLS,
  findObject,
  kustomizationEntries,
  kustomizationObjects,
  kustomizationResources,
  readControllers,
  readYamlDocuments,
  repoRoot,
  runtimeSources,
  yamlFiles,
  type Json,
} from './support.js';

const NAMESPACE = 'kubecell-system';
const objects = kustomizationObjects('manifests');
const deployment = findObject(objects, 'Deployment', 'kubecell-hooks');
const service = findObject(objects, 'Service', 'kubecell-hooks');
const podSpec = ((deployment.spec as Json).template as Json).spec as Json;
const podLabels = (((deployment.spec as Json).template as Json).metadata as Json).labels as Json;
const container = (podSpec.containers as Json[])[0] as Json;
const env = new Map(
  ((container.env ?? []) as Json[]).map((entry) => [String(entry.name), entry] as const),
);
const envValue = (name: string): unknown => env.get(name)?.value;

function namespaceOf(object: Json): unknown {
  return (object.metadata as Json).namespace;
}

function servicePort(port: number): Json {
  const found = ((service.spec as Json).ports as Json[]).find((entry) => entry.port === port);
  expect(found, `Service kubecell-hooks port ${port}`).to.not.equal(undefined);
  return found as Json;
}

function containerPort(name: unknown): number {
  const found = ((container.ports ?? []) as Json[]).find((entry) => entry.name === name);
  expect(found, `container port named ${String(name)}`).to.not.equal(undefined);
  return Number((found as Json).containerPort);
}

describe('install manifests', () => {
  describe('kustomizations', () => {
    it('metacontroller/kustomization.yaml lists every metacontroller/*.yaml, and only those', () => {
      const files = yamlFiles('metacontroller')
        .filter((file) => !file.endsWith('kustomization.yaml'))
        .map((file) => path.posix.basename(file));
      expect(kustomizationEntries('metacontroller').sort()).to.deep.equal(files.sort());
    });

    it('every file under metacontroller/ is reached by exactly one install: the base or a component', () => {
      const reached = METACONTROLLER_INSTALLS.flatMap((dir) => kustomizationResources(dir));
      const files = yamlFiles('metacontroller', true).filter(
        (file) => !/(^|\/)kustomization\.ya?ml$/.test(file),
      );
      expect([...reached].sort()).to.deep.equal(files.sort());
    });

    it('each GPUCellPool component is a Kustomization of its own: its controller and its role', () => {
      const baseObjects = objects;
      for (const dir of GPUCELLPOOL_COMPONENTS) {
        const [kustomization] = readYamlDocuments(`${dir}/kustomization.yaml`);
        // `kubectl apply -k` refuses a kustomize Component as the root of a build.
        expect(kustomization?.kind, dir).to.equal('Kustomization');
        expect(kustomizationEntries(dir), dir).to.deep.equal(['controller.yaml', 'rbac.yaml']);
        const built = kustomizationObjects(dir);
        expect(built.map((object) => String(object.kind)).sort(), dir).to.deep.equal([
          'ClusterRole',
          'ClusterRoleBinding',
          'CompositeController',
        ]);
        const provisioner = dir.split('/').pop() as string;
        const controller = findObject(
          built,
          'CompositeController',
          `kubecell-gpucellpool-${provisioner}`,
        );
        expect(((controller.spec as Json).parentResource as Json).labelSelector, dir).to.deep.equal(
          { matchLabels: { 'kubecell.io/provisioner': provisioner } },
        );
        const binding = findObject(
          built,
          'ClusterRoleBinding',
          `kubecell-metacontroller-gpucellpool-${provisioner}`,
        );
        expect((binding.roleRef as Json).name).to.equal(
          `kubecell-metacontroller-gpucellpool-${provisioner}`,
        );
        // The same ServiceAccount as the base's binding (manifests/rbac/metacontroller.yaml).
        expect(binding.subjects).to.deep.equal(
          findObject(baseObjects, 'ClusterRoleBinding', 'kubecell-metacontroller').subjects,
        );
      }
    });

    it('the base needs neither KubeVirt nor Cluster API', () => {
      const children = readControllers(METACONTROLLER_BASE).flatMap((controller) =>
        controller.children.map((child) => child.apiVersion),
      );
      expect(
        children.filter((apiVersion) => /kubevirt|cluster\.x-k8s\.io/.test(apiVersion)),
      ).to.deep.equal([]);
    });

    it('manifests/kustomization.yaml reaches every manifest under manifests/ (the optional applies aside)', () => {
      // A transformer configuration (image-fields.yaml) is reached through `configurations`.
      const [root] = readYamlDocuments('manifests/kustomization.yaml');
      const configurations = ((root?.['configurations'] ?? []) as string[]).map(
        (file) => `manifests/${file}`,
      );
      const reached = new Set([...kustomizationResources('manifests'), ...configurations]);
      // Applied on their own when wanted: the cert-manager overlay, Metacontroller's own
      // least-privilege role (manifests/metacontroller-core/rbac.yaml says when), and the
      // monitoring for the Prometheus Operator, whose CRDs a cluster may not have (checked
      // structurally by monitoring.test.ts); and Metacontroller itself, step 0, installed before
      // KubeCell (checked by metacontroller-install.test.ts).
      const optional = [
        'manifests/metacontroller-install/',
        'manifests/webhook/cert-manager/',
        'manifests/metacontroller-core/',
        'manifests/monitoring/',
      ];
      const expected = yamlFiles('manifests', true).filter(
        (file) =>
          !/(^|\/)kustomization\.ya?ml$/.test(file) &&
          !optional.some((dir) => file.startsWith(dir)),
      );
      expect(expected.filter((file) => !reached.has(file))).to.deep.equal([]);
      expect(yamlFiles('manifests/crds').length).to.be.greaterThan(0);
    });

    it('sets the image tag to the package version', () => {
      const [kustomization] = readYamlDocuments('manifests/kustomization.yaml');
      const version = (
        JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
      const image = ((kustomization?.images ?? []) as Json[]).find(
        (entry) => entry.name === container.image,
      );
      expect(image, `an images entry for ${String(container.image)}`).to.not.equal(undefined);
      expect(image?.newTag).to.equal(version);
    });

    it('puts every namespaced object in kubecell-system', () => {
      const misplaced = objects
        .filter((object) =>
          [
            'Deployment',
            'Service',
            'ServiceAccount',
            'PodDisruptionBudget',
            'NetworkPolicy',
          ].includes(String(object.kind)),
        )
        .filter((object) => namespaceOf(object) !== NAMESPACE)
        .map((object) => `${String(object.kind)}/${String((object.metadata as Json).name)}`);
      expect(misplaced).to.deep.equal([]);
      expect(findObject(objects, 'Namespace', NAMESPACE)).to.be.an('object');
    });
  });

  describe('Metacontroller reaches every hook', () => {
    const registry = registerControllers(new HookRegistry(), { env: {}, clock: () => new Date() });
    const registered = new Map(registry.registered().map((entry) => [entry.controller, entry]));

    for (const controller of readControllers()) {
      it(`${controller.file}: ${controller.name}`, () => {
        // kubecell-<hook name>; a GPUCellPool component adds its provisioner, and both call the
        // gpucellpool hooks.
        const component = /^metacontroller\/gpucellpool\/([^/]+)\/controller\.yaml$/.exec(
          controller.file,
        )?.[1];
        expect(controller.name).to.equal(
          `kubecell-${controller.hookName}${component === undefined ? '' : `-${component}`}`,
        );
        const entry = registered.get(controller.hookName as never);
        expect(entry, `hook server registers ${controller.hookName}`).to.not.equal(undefined);
        expect(entry?.controllerType).to.equal(
          controller.kind === 'CompositeController' ? 'composite' : 'decorator',
        );
        for (const [hook, url] of Object.entries(controller.hooks)) {
          const [, host, name, hookInUrl] = HOOK_URL.exec(url) ?? [];
          expect(hookInUrl, url).to.equal(hook);
          expect(name, url).to.equal(controller.hookName);
          // http://<service>.<namespace>[.svc[.cluster.local]], port 80
          expect(host, url).to.match(
            new RegExp(`^kubecell-hooks\\.${NAMESPACE}(\\.svc(\\.cluster\\.local)?)?$`),
          );
          expect(registry.lookup(name as string, hook).found, `${url} is served`).to.equal(true);
        }
      });
    }

    it('through Service port 80 to the port the server listens on', () => {
      expect(namespaceOf(service)).to.equal(NAMESPACE);
      const http = servicePort(80);
      expect(http.name).to.equal('http');
      const port = containerPort(http.targetPort);
      expect(port).to.equal(Number(envValue('KUBECELL_PORT') ?? DEFAULTS.KUBECELL_PORT));
    });
  });

  describe('the admission webhooks reach the HTTPS port', () => {
    const configurations = objects.filter((object) =>
      ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes(
        String(object.kind),
      ),
    );

    it('both configurations call Service kubecell-hooks port 443 → container port 9443', () => {
      expect(configurations).to.have.length(2);
      for (const configuration of configurations) {
        for (const webhook of configuration.webhooks as Json[]) {
          const target = (webhook.clientConfig as Json).service as Json;
          expect(target).to.include({ name: 'kubecell-hooks', namespace: NAMESPACE });
          const port = servicePort(Number(target.port ?? 443));
          expect(port.name).to.equal('webhook');
          expect(containerPort(port.targetPort)).to.equal(
            Number(envValue('KUBECELL_WEBHOOK_PORT') ?? WEBHOOK_DEFAULTS.KUBECELL_WEBHOOK_PORT),
          );
        }
      }
    });

    it('the TLS files are the mounted Secret kubecell-webhook-tls', () => {
      const volume = (podSpec.volumes as Json[]).find(
        (entry) => (entry.secret as Json | undefined)?.secretName === 'kubecell-webhook-tls',
      );
      expect(volume, 'a volume of Secret kubecell-webhook-tls').to.not.equal(undefined);
      const mount = (container.volumeMounts as Json[]).find((entry) => entry.name === volume?.name);
      expect(mount?.readOnly).to.equal(true);
      expect(envValue('KUBECELL_TLS_CERT_FILE')).to.equal(`${String(mount?.mountPath)}/tls.crt`);
      expect(envValue('KUBECELL_TLS_KEY_FILE')).to.equal(`${String(mount?.mountPath)}/tls.key`);
    });
  });

  describe('the hook server NetworkPolicy (issue 15, finding 1)', () => {
    const policy = findObject(objects, 'NetworkPolicy', 'kubecell-hooks');
    const policySpec = policy.spec as Json;
    const rules = policySpec.ingress as Json[];
    const rulesFor = (port: string): Json[] =>
      rules.filter((rule) => ((rule.ports ?? []) as Json[]).some((entry) => entry.port === port));

    it('selects the hook server Pods, for ingress only', () => {
      expect(namespaceOf(policy)).to.equal(NAMESPACE);
      expect((policySpec.podSelector as Json).matchLabels).to.deep.equal(podLabels);
      expect(policySpec.policyTypes).to.deep.equal(['Ingress']);
    });

    it('names only container ports the server listens on, every rule limited to a port', () => {
      for (const rule of rules) {
        const ports = (rule.ports ?? []) as Json[];
        expect(ports, 'a rule without ports opens every port').to.have.length.greaterThan(0);
        for (const entry of ports) {
          expect(entry.protocol).to.equal('TCP');
          containerPort(entry.port);
        }
      }
      expect(containerPort('http')).to.equal(
        Number(envValue('KUBECELL_PORT') ?? DEFAULTS.KUBECELL_PORT),
      );
      expect(containerPort('webhook')).to.equal(
        Number(envValue('KUBECELL_WEBHOOK_PORT') ?? WEBHOOK_DEFAULTS.KUBECELL_WEBHOOK_PORT),
      );
    });

    it("admits only Metacontroller's namespace to the hook port", () => {
      const http = rulesFor('http');
      expect(http).to.have.length(1);
      expect(http[0]?.from).to.deep.equal([
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'metacontroller' } } },
      ]);
      // The same namespace the ClusterRoleBinding binds Metacontroller's ServiceAccount in.
      const binding = findObject(objects, 'ClusterRoleBinding', 'kubecell-metacontroller');
      expect((binding.subjects as Json[]).map((subject) => subject.namespace)).to.deep.equal([
        'metacontroller',
      ]);
    });

    it('leaves the webhook port open to the apiserver, wherever its calls come from', () => {
      const webhook = rulesFor('webhook');
      expect(webhook).to.have.length(1);
      expect(webhook[0]?.from).to.equal(undefined);
      const text = readFileSync(
        path.join(repoRoot, 'manifests/hook-server/networkpolicy.yaml'),
        'utf8',
      );
      // The file says why, what bounds it, and how to narrow it.
      for (const words of [
        'KUBECELL_WEBHOOK_MAX_INFLIGHT',
        'KUBECELL_BODY_TIMEOUT_SECONDS',
        'ipBlock',
      ]) {
        expect(text).to.include(words);
      }
    });
  });

  describe('the hook server Deployment', () => {
    it('runs two replicas behind a PodDisruptionBudget of minAvailable 1', () => {
      expect((deployment.spec as Json).replicas).to.equal(2);
      const pdb = findObject(objects, 'PodDisruptionBudget', 'kubecell-hooks');
      expect((pdb.spec as Json).minAvailable).to.equal(1);
      expect(((pdb.spec as Json).selector as Json).matchLabels).to.deep.equal(podLabels);
      expect(((deployment.spec as Json).selector as Json).matchLabels).to.deep.equal(podLabels);
      expect((service.spec as Json).selector).to.deep.equal(podLabels);
    });

    it('probes /readyz for readiness and /healthz for liveness on the HTTP port', () => {
      const readiness = (container.readinessProbe as Json).httpGet as Json;
      const liveness = (container.livenessProbe as Json).httpGet as Json;
      expect(readiness).to.include({ path: '/readyz', port: 'http' });
      expect(liveness).to.include({ path: '/healthz', port: 'http' });
    });

    it('runs as uid 65532, non-root, read-only, no capabilities, RuntimeDefault seccomp', () => {
      const pod = podSpec.securityContext as Json;
      const own = container.securityContext as Json;
      expect(pod).to.deep.include({ runAsNonRoot: true, runAsUser: 65532 });
      expect((pod.seccompProfile as Json).type).to.equal('RuntimeDefault');
      expect(own).to.deep.include({
        runAsNonRoot: true,
        runAsUser: 65532,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      expect((own.capabilities as Json).drop).to.deep.equal(['ALL']);
      expect(own.privileged ?? false).to.equal(false);
    });

    it('gives tsx nothing to write on the read-only root: no compile cache, /tmp an emptyDir', () => {
      expect(envValue('TSX_DISABLE_CACHE')).to.equal('1');
      const tmp = (container.volumeMounts as Json[]).find((entry) => entry.mountPath === '/tmp');
      const volume = (podSpec.volumes as Json[]).find((entry) => entry.name === tmp?.name);
      expect(volume?.emptyDir, 'an emptyDir on /tmp').to.be.an('object');
    });

    it('requests and limits CPU and memory', () => {
      const resources = container.resources as Json;
      for (const kind of ['requests', 'limits']) {
        expect(resources[kind], kind).to.have.all.keys('cpu', 'memory');
      }
    });

    it('runs as ServiceAccount kubecell-hooks, with the controller namespace its own', () => {
      expect(podSpec.serviceAccountName).to.equal('kubecell-hooks');
      expect(findObject(objects, 'ServiceAccount', 'kubecell-hooks')).to.be.an('object');
      expect(env.get('KUBECELL_CONTROLLER_NAMESPACE')?.valueFrom).to.deep.equal({
        fieldRef: { fieldPath: 'metadata.namespace' },
      });
    });

    it('sets only variables the hook server reads', () => {
      const sources = runtimeSources('hooks')
        .map((file) => readFileSync(path.join(repoRoot, file), 'utf8'))
        .join('\n');
      const unknown = [...env.keys()].filter(
        (name) => name.startsWith('KUBECELL_') && !sources.includes(name),
      );
      expect(unknown).to.deep.equal([]);
    });
  });
});
