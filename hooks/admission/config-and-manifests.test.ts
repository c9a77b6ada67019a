import { ensureBinaries } from '../../harness/cluster/binaries.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from '../../test/cluster/shared-cluster.js';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigError } from '../config/env-reader.js';
import { loadWebhookConfig } from './config.js';
import { GROUP, KIND_NAMES, KINDS, VERSION } from '../api/kinds.js';
import { VIRTUALCLUSTER_FINALIZER } from './finalizer.js';
import { LABELLED_KINDS } from './mutate.js';
import { REPO_ROOT, type Json } from './testing.js';

function yamlDocs(file: string): Json[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Json);
}

function configProblems(env: Record<string, string>): string[] {
  try {
    loadWebhookConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return [];
}

describe('admission webhook configuration', () => {
  describe('environment (hooks/admission/config.ts)', () => {
    it('defaults: port 9443, kubecell-system, HTTPS off, the watch cache on', () => {
      expect(loadWebhookConfig({})).to.deep.equal({
        port: 9443,
        controllerNamespace: 'kubecell-system',
        maxInflight: 64,
        cache: 'watch',
      });
    });

    it('reads KUBECELL_WEBHOOK_CACHE (watch or off) and refuses anything else', () => {
      expect(loadWebhookConfig({ KUBECELL_WEBHOOK_CACHE: 'off' }).cache).to.equal('off');
      expect(loadWebhookConfig({ KUBECELL_WEBHOOK_CACHE: ' watch ' }).cache).to.equal('watch');
      const [problem] = configProblems({ KUBECELL_WEBHOOK_CACHE: 'false' });
      expect(problem).to.match(/^KUBECELL_WEBHOOK_CACHE="false" is not one of watch, off; set it/);
    });

    it('reads KUBECELL_WEBHOOK_MAX_INFLIGHT (0 = no limit) and refuses a bad one', () => {
      expect(loadWebhookConfig({ KUBECELL_WEBHOOK_MAX_INFLIGHT: '0' }).maxInflight).to.equal(0);
      expect(loadWebhookConfig({ KUBECELL_WEBHOOK_MAX_INFLIGHT: '8' }).maxInflight).to.equal(8);
      expect(configProblems({ KUBECELL_WEBHOOK_MAX_INFLIGHT: 'lots' })).to.deep.equal([
        'KUBECELL_WEBHOOK_MAX_INFLIGHT="lots" is not a limit; set it to an integer from 0 ' +
          '(no limit) to 100000 (default 64)',
      ]);
    });

    it('enables HTTPS when both files are set', () => {
      expect(
        loadWebhookConfig({
          KUBECELL_WEBHOOK_PORT: '8443',
          KUBECELL_TLS_CERT_FILE: '/tls/tls.crt',
          KUBECELL_TLS_KEY_FILE: ' /tls/tls.key ',
          KUBECELL_CONTROLLER_NAMESPACE: 'platform',
        }),
      ).to.deep.equal({
        port: 8443,
        controllerNamespace: 'platform',
        maxInflight: 64,
        cache: 'watch',
        tls: { certFile: '/tls/tls.crt', keyFile: '/tls/tls.key' },
      });
    });

    it('lists every problem, each with its fix', () => {
      expect(
        configProblems({
          KUBECELL_WEBHOOK_PORT: '99999',
          KUBECELL_TLS_CERT_FILE: '/tls/tls.crt',
          KUBECELL_CONTROLLER_NAMESPACE: 'Kube_System',
        }),
      ).to.deep.equal([
        'KUBECELL_WEBHOOK_PORT="99999" is not a port; set it to an integer from 0 to 65535 (default 9443)',
        'KUBECELL_TLS_CERT_FILE is set but KUBECELL_TLS_KEY_FILE is not; set both to serve the ' +
          'admission webhook over HTTPS (e.g. tls.crt and tls.key of the mounted Secret ' +
          'kubecell-webhook-tls), or neither to disable it',
        'KUBECELL_CONTROLLER_NAMESPACE="Kube_System" is not a namespace name; set it to a DNS ' +
          'label such as kubecell-system (the default)',
      ]);
      expect(configProblems({ KUBECELL_TLS_KEY_FILE: '/k' })[0]).to.match(
        /^KUBECELL_TLS_KEY_FILE is set but KUBECELL_TLS_CERT_FILE is not/,
      );
    });
  });

  describe('kinds (hooks/api/kinds.ts)', () => {
    it('match the plural names and scopes of the schemas and the CRDs', () => {
      for (const kind of KIND_NAMES) {
        const info = KINDS[kind];
        const schema = JSON.parse(
          readFileSync(join(REPO_ROOT, 'schemas', `${kind.toLowerCase()}.schema.json`), 'utf8'),
        ) as { 'x-kubecell-crd': { plural: string; scope: string } };
        expect(info.plural, kind).to.equal(schema['x-kubecell-crd'].plural);
        expect(info.namespaced, kind).to.equal(schema['x-kubecell-crd'].scope === 'Namespaced');
        const [crd] = yamlDocs(
          join(REPO_ROOT, 'manifests', 'crds', `${GROUP}_${info.plural}.yaml`),
        ) as Array<{ spec: { names: { kind: string }; scope: string } }>;
        expect(crd?.spec.names.kind).to.equal(kind);
        expect(crd?.spec.scope).to.equal(info.namespaced ? 'Namespaced' : 'Cluster');
      }
    });
  });

  describe('metacontroller/virtualcluster.yaml', () => {
    it('is the controller whose finalizer the mutating webhook puts on (D47)', () => {
      const [controller] = yamlDocs(
        join(REPO_ROOT, 'metacontroller', 'virtualcluster.yaml'),
      ) as Array<{
        kind: string;
        metadata: { name: string };
        spec: { parentResource: { resource: string }; hooks: Record<string, unknown> };
      }>;
      expect(controller?.kind).to.equal('CompositeController');
      expect(controller?.spec.parentResource.resource).to.equal('virtualclusters');
      // Metacontroller names its finalizer after the controller, and keeps one only with a
      // finalize hook (v4.17.2 pkg/controller/composite/controller.go, finalizer.NewManager).
      expect(controller?.spec.hooks).to.have.property('finalize');
      expect(VIRTUALCLUSTER_FINALIZER).to.equal(
        `metacontroller.io/compositecontroller-${controller?.metadata.name}`,
      );
    });
  });

  describe('manifests/webhook', () => {
    const dir = join(REPO_ROOT, 'manifests', 'webhook');
    const [validating, mutating] = yamlDocs(join(dir, 'base', 'webhooks.yaml')) as Array<{
      kind: string;
      metadata: { name: string };
      webhooks: Array<Record<string, unknown>>;
    }>;

    it('declares both configurations as the server expects them', () => {
      expect(validating?.kind).to.equal('ValidatingWebhookConfiguration');
      expect(validating?.metadata.name).to.equal('kubecell-validating');
      expect(mutating?.kind).to.equal('MutatingWebhookConfiguration');
      expect(mutating?.metadata.name).to.equal('kubecell-mutating');
      for (const [config, path] of [
        [validating, '/admission/validate'],
        [mutating, '/admission/mutate'],
      ] as const) {
        expect(config?.webhooks).to.have.length(1);
        const webhook = config?.webhooks[0] as Record<string, unknown>;
        expect(webhook).to.include({
          sideEffects: 'None',
          timeoutSeconds: 10,
          failurePolicy: 'Fail',
        });
        expect(webhook.admissionReviewVersions).to.deep.equal(['v1']);
        expect(webhook.clientConfig).to.deep.equal({
          service: { name: 'kubecell-hooks', namespace: 'kubecell-system', port: 443, path },
        });
        expect(String(webhook.name).split('.').length).to.be.at.least(3);
      }
    });

    it('validates the five kinds and mutates the three it labels, each in its scope', () => {
      const resources = (config: typeof validating) =>
        (config?.webhooks[0]?.rules as Array<Record<string, string[] | string>>).flatMap((rule) => {
          expect(rule.apiGroups).to.deep.equal([GROUP]);
          expect(rule.apiVersions).to.deep.equal([VERSION]);
          expect(rule.operations).to.deep.equal(['CREATE', 'UPDATE']);
          const plurals = (rule.resources ?? []) as string[];
          if (rule.scope !== '*') {
            // A rule's scope must admit each of its kinds (Namespaced or Cluster).
            for (const plural of plurals) {
              const info = KIND_NAMES.map((k) => KINDS[k]).find((k) => k.plural === plural);
              expect(rule.scope, plural).to.equal(info?.namespaced ? 'Namespaced' : 'Cluster');
            }
          }
          return plurals;
        });
      expect(resources(validating).sort()).to.deep.equal(
        KIND_NAMES.map((k) => KINDS[k].plural).sort(),
      );
      expect(resources(mutating).sort()).to.deep.equal(
        LABELLED_KINDS.map((k) => KINDS[k].plural).sort(),
      );
      expect(resources(mutating).sort()).to.deep.equal([
        'gpucellpools',
        'virtualclusterplans',
        'virtualclusters',
      ]);
    });

    it('lets the webhook read what its cross-object rules need, and nothing more', () => {
      const [role, binding] = yamlDocs(join(dir, 'base', 'rbac.yaml')) as Json[];
      expect((role as { rules: unknown }).rules).to.deep.equal([
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['kubecell.io'], resources: ['virtualclusters'], verbs: ['list', 'watch'] },
        {
          apiGroups: ['kubecell.io'],
          resources: ['cells', 'virtualnodeclasses'],
          verbs: ['get', 'list', 'watch'],
        },
      ]);
      expect((binding as { subjects: unknown }).subjects).to.deep.equal([
        { kind: 'ServiceAccount', name: 'kubecell-hooks', namespace: 'kubecell-system' },
      ]);
    });

    it('has a cert-manager overlay that injects the CA and issues kubecell-webhook-tls', () => {
      const docs = yamlDocs(join(dir, 'cert-manager', 'certificate.yaml')) as Array<{
        kind: string;
        metadata: { name: string; namespace: string };
        spec: Record<string, unknown>;
      }>;
      const serving = docs.find(
        (d) => d.kind === 'Certificate' && d.metadata.name === 'kubecell-webhook',
      );
      expect(serving?.metadata.namespace).to.equal('kubecell-system');
      expect(serving?.spec.secretName).to.equal('kubecell-webhook-tls');
      expect(serving?.spec.dnsNames).to.deep.equal([
        'kubecell-hooks.kubecell-system.svc',
        'kubecell-hooks.kubecell-system.svc.cluster.local',
      ]);
      for (const file of ['inject-ca-validating.yaml', 'inject-ca-mutating.yaml']) {
        const [patch] = yamlDocs(join(dir, 'cert-manager', file)) as Array<{
          metadata: { annotations: Record<string, string> };
        }>;
        expect(patch?.metadata.annotations).to.deep.equal({
          'cert-manager.io/inject-ca-from': 'kubecell-system/kubecell-webhook',
        });
      }
    });

    // kubectl (with its built-in kustomize) comes with the cluster test binaries, built here if
    // they are not yet: this test must run, never skip.
    let kubectl: string;
    before(async function () {
      this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
      kubectl = (await ensureBinaries()).kubectl;
    });

    it('builds with kustomize: the base, and the overlay with the annotation on both', function () {
      const build = (path: string): Json[] =>
        parseAllDocuments(
          execFileSync(kubectl, ['kustomize', join(dir, path)], { encoding: 'utf8' }),
        ).map((d) => d.toJS() as Json);
      const kinds = (docs: Json[]) => docs.map((d) => String(d.kind)).sort();
      expect(kinds(build('.'))).to.deep.equal([
        'ClusterRole',
        'ClusterRoleBinding',
        'MutatingWebhookConfiguration',
        'ValidatingWebhookConfiguration',
      ]);
      const overlay = build('cert-manager');
      expect(kinds(overlay)).to.deep.equal([
        'Certificate',
        'Certificate',
        'ClusterRole',
        'ClusterRoleBinding',
        'Issuer',
        'Issuer',
        'MutatingWebhookConfiguration',
        'ValidatingWebhookConfiguration',
      ]);
      for (const doc of overlay.filter((d) => String(d.kind).endsWith('WebhookConfiguration'))) {
        expect((doc.metadata as { annotations?: unknown }).annotations).to.deep.equal({
          'cert-manager.io/inject-ca-from': 'kubecell-system/kubecell-webhook',
        });
        expect((doc.webhooks as unknown[]).length).to.equal(1);
      }
    });
  });
});
