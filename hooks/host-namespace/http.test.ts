// The kubecell-host-namespace hooks over HTTP, with the JSON Metacontroller v4.17.2 sends to a
// v2 DecoratorController: `{controller, object, attachments, related, finalizing}` for sync and
// finalize, `{controller, parent}` for customize (pkg/controller/decorator/api/v2/hooks.go,
// pkg/controller/common/customize/api/v2/hooks.go); metacontroller-body.test.ts posts the body
// hooks/metacontroller/__fixtures__ holds verbatim. The attached NetworkPolicies are compared
// with committed YAML snapshots under __snapshots__/ (UPDATE_SNAPSHOTS=1 rewrites them).
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import { productApp } from '../controllers/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import type { Namespace } from '../kube/objects.js';
import { FINALIZE_RESYNC_SECONDS } from './sync.js';
import {
  applyResponse,
  decoratorRequest,
  hostNamespace,
  hostNamespaceController,
  type HookResponse,
  matchSnapshot,
  NOW,
  objectsYaml,
} from './testing.js';

async function post(
  app: Express,
  hook: 'sync' | 'finalize',
  parent: Namespace,
  children: KubernetesObject[] = [],
): Promise<HookResponse> {
  const response = await request(app)
    .post(`/hooks/host-namespace/${hook}`)
    .send(decoratorRequest(parent, hook === 'finalize', children))
    .expect(200);
  return response.body as HookResponse;
}

/** Attachments as Metacontroller observes them: owned by the namespace, with server fields. */
function observed(attachments: KubernetesObject[], parent: Namespace): KubernetesObject[] {
  return attachments.map((attachment) => ({
    ...attachment,
    metadata: {
      ...attachment.metadata,
      uid: `uid-${attachment.metadata.name}`,
      resourceVersion: '7',
      annotations: { 'metacontroller.k8s.io/decorator-controller': 'kubecell-host-namespace' },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          name: parent.metadata.name,
          uid: parent.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  }));
}

describe('host-namespace hooks over HTTP', () => {
  // The first productApp() loads every controller module; under `mocha --no-config` (2 s
  // default timeout) that alone can outlast a test.
  before(async function () {
    this.timeout(60_000);
    await productApp(NOW);
  });

  it('customize asks for no related objects', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/host-namespace/customize')
      .send({ controller: hostNamespaceController(), parent: hostNamespace() })
      .expect(200);
    expect(response.body).to.deep.equal({ relatedResources: [] });
  });

  it('a new host namespace gets the Pod Security labels, the annotations and the policies', async () => {
    const { app } = await productApp(NOW);
    const body = await post(app, 'sync', hostNamespace());
    expect(body.labels).to.deep.equal({
      'pod-security.kubernetes.io/audit': 'baseline',
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/warn': 'baseline',
    });
    expect(body.annotations).to.deep.equal({
      'kubecell.io/baseline': 'v2',
      'kubecell.io/pod-security-applied': 'audit=baseline,enforce=baseline,warn=baseline',
      'kubecell.io/pod-security-kept': null,
      'kubecell.io/pod-security-weaker': null,
    });
    expect(body).to.not.have.property('status');
    expect(body).to.not.have.property('finalized');
    expect(body.attachments.map((policy) => policy.metadata.name)).to.deep.equal([
      'kubecell-deny-ingress',
      'kubecell-allow-same-namespace',
      'kubecell-allow-api-server',
      'kubecell-egress',
    ]);
    for (const policy of body.attachments) {
      expect(policy).to.deep.include({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' });
      expect(policy.metadata.namespace).to.equal('tenant-a');
    }
    matchSnapshot('new-host-namespace', objectsYaml(body.attachments));
  });

  it('renders the configured level, egress and API client CIDRs and k3k namespace', async () => {
    const { app } = await productApp(NOW, {
      KUBECELL_PSA_LEVEL: 'restricted',
      KUBECELL_HOST_EGRESS_CIDRS: 'none',
      KUBECELL_API_CLIENT_CIDRS: '192.0.2.0/24,10.20.0.0/16',
      KUBECELL_K3K_CONTROLLER: 'k3k/k3k',
    });
    const body = await post(app, 'sync', hostNamespace('tenant-b'));
    expect(Object.values(body.labels ?? {})).to.deep.equal([
      'restricted',
      'restricted',
      'restricted',
    ]);
    matchSnapshot('restricted-no-egress-cidrs', objectsYaml(body.attachments));
  });

  it('keeps a Pod Security label the platform set, never returns it, and reports it as weaker', async () => {
    const { app } = await productApp(NOW);
    const namespace = hostNamespace('tenant-a', {
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/enforce-version': 'v1.35',
    });
    const body = await post(app, 'sync', namespace);
    expect(body.labels).to.deep.equal({
      'pod-security.kubernetes.io/audit': 'baseline',
      'pod-security.kubernetes.io/warn': 'baseline',
    });
    expect(body.annotations).to.deep.include({
      'kubecell.io/pod-security-applied': 'audit=baseline,warn=baseline',
      'kubecell.io/pod-security-kept': 'enforce=privileged',
      'kubecell.io/pod-security-weaker': 'enforce=privileged',
    });

    // Applied, then synced again: still kept, and the answer does not change.
    const applied = applyResponse(namespace, body);
    expect(applied.metadata.labels?.['pod-security.kubernetes.io/enforce']).to.equal('privileged');
    const again = await post(app, 'sync', applied, observed(body.attachments, applied));
    expect(again).to.deep.equal(body);
  });

  it('puts back a label of its own that was deleted, and leaves one changed by hand', async () => {
    const { app } = await productApp(NOW);
    const first = await post(app, 'sync', hostNamespace());
    const applied = applyResponse(hostNamespace(), first);
    const labels = { ...applied.metadata.labels };
    delete labels['pod-security.kubernetes.io/audit'];
    labels['pod-security.kubernetes.io/warn'] = 'restricted';
    const edited: Namespace = { ...applied, metadata: { ...applied.metadata, labels } };
    const body = await post(app, 'sync', edited, observed(first.attachments, edited));
    expect(body.labels).to.deep.equal({
      'pod-security.kubernetes.io/audit': 'baseline',
      'pod-security.kubernetes.io/enforce': 'baseline',
    });
    expect(body.annotations).to.deep.include({
      'kubecell.io/pod-security-applied': 'audit=baseline,enforce=baseline',
      'kubecell.io/pod-security-kept': 'warn=restricted',
    });
  });

  it('moves its own labels to a new configured level', async () => {
    const before = await productApp(NOW);
    const first = await post(before.app, 'sync', hostNamespace());
    const applied = applyResponse(hostNamespace(), first);
    const after = await productApp(NOW, { KUBECELL_PSA_LEVEL: 'restricted' });
    const body = await post(after.app, 'sync', applied, observed(first.attachments, applied));
    expect(body.labels).to.deep.equal({
      'pod-security.kubernetes.io/audit': 'restricted',
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
    });
    expect(body.annotations?.['kubecell.io/pod-security-kept']).to.equal(null);
    expect(body.annotations?.['kubecell.io/pod-security-weaker']).to.equal(null);
  });

  it('reports a weaker label once the configured level rises above it, and stops when it is removed', async () => {
    const restricted = await productApp(NOW, { KUBECELL_PSA_LEVEL: 'restricted' });
    const namespace = hostNamespace('tenant-a', {
      'pod-security.kubernetes.io/enforce': 'baseline',
    });
    const body = await post(restricted.app, 'sync', namespace);
    expect(body.annotations).to.deep.include({
      'kubecell.io/pod-security-kept': 'enforce=baseline',
      'kubecell.io/pod-security-weaker': 'enforce=baseline',
    });
    // The platform removes its label: KubeCell's own comes back, and the report goes.
    const applied = applyResponse(namespace, body);
    const labels = { ...applied.metadata.labels };
    delete labels['pod-security.kubernetes.io/enforce'];
    const cleared: Namespace = { ...applied, metadata: { ...applied.metadata, labels } };
    const after = await post(restricted.app, 'sync', cleared, observed(body.attachments, cleared));
    expect(after.labels?.['pod-security.kubernetes.io/enforce']).to.equal('restricted');
    expect(after.annotations).to.deep.include({
      'kubecell.io/pod-security-kept': null,
      'kubecell.io/pod-security-weaker': null,
    });
  });

  it('finalize (label removed) drops the attachments and its own labels and annotations, not the platform’s', async () => {
    const { app } = await productApp(NOW);
    const platformLabels = {
      'pod-security.kubernetes.io/enforce': 'restricted',
      team: 'research',
    };
    const start = hostNamespace('tenant-a', platformLabels);
    const synced = await post(app, 'sync', start);
    const applied = applyResponse(start, synced);
    // The platform removes the host label: Metacontroller calls finalize, the namespace still
    // carries its finalizer and the attachments.
    const labels = { ...applied.metadata.labels };
    delete labels['kubecell.io/host-namespace'];
    const unlabelled: Namespace = {
      ...applied,
      metadata: {
        ...applied.metadata,
        labels,
        finalizers: ['metacontroller.io/decoratorcontroller-kubecell-host-namespace'],
      },
    };
    const waiting = await post(
      app,
      'finalize',
      unlabelled,
      observed(synced.attachments, unlabelled),
    );
    expect(waiting.attachments).to.deep.equal([]);
    expect(waiting.finalized).to.equal(undefined);
    expect(waiting.resyncAfterSeconds).to.equal(FINALIZE_RESYNC_SECONDS);
    // Once the policies are gone, the same answer and `finalized`.
    const body = await post(app, 'finalize', unlabelled);
    const { finalized, ...rest } = body;
    expect(finalized).to.equal(true);
    expect(waiting).to.deep.equal({ ...rest, resyncAfterSeconds: FINALIZE_RESYNC_SECONDS });
    expect(body).to.deep.equal({
      labels: {
        'pod-security.kubernetes.io/audit': null,
        'pod-security.kubernetes.io/warn': null,
      },
      annotations: {
        'kubecell.io/baseline': null,
        'kubecell.io/pod-security-applied': null,
        'kubecell.io/pod-security-kept': null,
        'kubecell.io/pod-security-weaker': null,
      },
      attachments: [],
      finalized: true,
    });
    const after = applyResponse(unlabelled, body);
    expect(after.metadata.labels).to.deep.equal({
      'kubernetes.io/metadata.name': 'tenant-a',
      ...platformLabels,
    });
    expect(after.metadata.annotations).to.deep.equal({});
  });

  it('finalize of a deleted namespace answers the same', async () => {
    const { app } = await productApp(NOW);
    const synced = await post(app, 'sync', hostNamespace());
    const applied = applyResponse(hostNamespace(), synced);
    const deleting: Namespace = {
      ...applied,
      metadata: { ...applied.metadata, deletionTimestamp: '2026-11-30T00:00:00Z' },
      status: { phase: 'Terminating' },
    };
    const body = await post(app, 'finalize', deleting);
    expect(body.attachments).to.deep.equal([]);
    expect(body.finalized).to.equal(true);
    expect(Object.keys(body.labels ?? {})).to.have.length(3);
  });

  it('is byte-identical for identical input', async () => {
    const { app } = await productApp(NOW);
    const bodies = await Promise.all(
      [1, 2].map(async () => {
        const response = await request(app)
          .post('/hooks/host-namespace/sync')
          .send(decoratorRequest(hostNamespace()))
          .expect(200);
        return response.text;
      }),
    );
    expect(bodies[0]).to.equal(bodies[1]);
  });

  it('answers 400 for a namespace without the host label, and changes nothing', async () => {
    const { app } = await productApp(NOW);
    const namespace = hostNamespace();
    delete namespace.metadata.labels?.['kubecell.io/host-namespace'];
    const response = await request(app)
      .post('/hooks/host-namespace/sync')
      .send(decoratorRequest(namespace))
      .expect(400);
    expect(JSON.stringify(response.body)).to.contain('kubecell.io/host-namespace=true');
  });

  it('answers 400 for a parent that is not a Namespace', async () => {
    const { app } = await productApp(NOW);
    const parent = { ...hostNamespace(), kind: 'ConfigMap' } as unknown as Namespace;
    const response = await request(app)
      .post('/hooks/host-namespace/sync')
      .send(decoratorRequest(parent))
      .expect(400);
    expect(JSON.stringify(response.body)).to.contain('expected a v1 Namespace');
  });
});
