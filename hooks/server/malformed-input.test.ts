import { expect } from 'chai';
import {
  cell,
  hostNamespace,
  lease,
  managedCluster,
  node,
  pod,
  readyProvider,
  relatedOf,
  resolvedVirtualCluster,
} from '../cell/testing.js';
import {
  acceptedRelated,
  asObserved,
  syncRequest,
  virtualCluster,
} from '../virtualcluster/testing.js';
import { syncVirtualCluster } from '../virtualcluster/sync.js';
import { CONFIG, NOW } from '../virtualcluster/testing.js';
import { loadFixture, type DecoratorHookBody } from '../metacontroller/testing.js';
import {
  describeMalformedRequest,
  MAX_BODY_DEPTH,
  nestingDepthExceeds,
} from './malformed-input.js';

function cellBody(extra: object[] = []) {
  return {
    parent: cell(),
    children: {},
    related: relatedOf([
      managedCluster(),
      lease(10),
      node('node-a', { cpu: '64', memory: '512Gi', 'nvidia.com/gpu': '8' }),
      pod('p1', 'tenant-a', 'node-a', [{ cpu: '2', memory: '4Gi' }], { init: [{ cpu: '1' }] }),
      hostNamespace('tenant-a'),
      resolvedVirtualCluster('vc1', 'tenant-a', { 'requests.cpu': '4' }),
      ...readyProvider(),
      ...(extra as never[]),
    ]),
    finalizing: false,
  };
}

describe('malformed hook requests (asked only after a handler failed)', () => {
  it('finds nothing wrong with the requests Metacontroller sends', () => {
    expect(describeMalformedRequest(cellBody())).to.equal(undefined);
    const vc = virtualCluster();
    const first = syncVirtualCluster(syncRequest(vc), CONFIG, NOW);
    const children = first.children.map((child) => asObserved(child, { nodePort: 31234 }));
    const resync = syncRequest(
      { ...vc, status: first.status } as typeof vc,
      acceptedRelated(),
      children,
    );
    expect(describeMalformedRequest(JSON.parse(JSON.stringify(resync)))).to.equal(undefined);
  });

  it('finds nothing wrong with the DecoratorController requests Metacontroller sends', () => {
    expect(describeMalformedRequest(loadFixture('decorator-sync-v2'))).to.equal(undefined);
    expect(describeMalformedRequest(loadFixture('decorator-sync-related-v2'))).to.equal(undefined);
  });

  it('reads a DecoratorController request under its own keys: object and attachments', () => {
    const body = loadFixture<DecoratorHookBody>('decorator-sync-v2');
    (body.object.metadata as unknown as Record<string, unknown>).labels = { team: 7 };
    const policy = body.attachments['NetworkPolicy.networking.k8s.io/v1']?.[
      'tenant-a/kubecell-egress'
    ] as unknown as Record<string, unknown>;
    policy.spec = 'everything';
    expect(describeMalformedRequest(body)).to.equal(
      [
        'request.object.metadata.labels: ["team"] must be a string, got number',
        'request.attachments["NetworkPolicy.networking.k8s.io/v1"]["tenant-a/kubecell-egress"].spec: must be an object, got string',
      ].join('; '),
    );
    const klass = loadFixture<DecoratorHookBody>('decorator-sync-related-v2');
    (klass.object as unknown as Record<string, unknown>).status = { usedBy: { count: 'two' } };
    expect(describeMalformedRequest(klass)).to.match(/^request\.object: status\.usedBy\.count/);
  });

  it('names nesting deeper than any Kubernetes object', () => {
    let deep: unknown = null;
    for (let i = 0; i < MAX_BODY_DEPTH + 5; i++) deep = { a: deep };
    expect(describeMalformedRequest({ parent: deep })).to.equal(
      `request body nests deeper than ${MAX_BODY_DEPTH} levels; no Kubernetes object does`,
    );
    expect(nestingDepthExceeds([[[1]]], 3)).to.equal(false);
    expect(nestingDepthExceeds([[[[1]]]], 3)).to.equal(true);
  });

  it('checks KubeCell objects against their schema, status included', () => {
    const body = cellBody();
    (body.parent as { status?: unknown }).status = { phase: 'Sleeping' };
    expect(describeMalformedRequest(body)).to.match(
      /^request\.parent: status\.phase: Unsupported value/,
    );
  });

  it('names fields of other objects whose JSON type the apiserver would never store', () => {
    const broken = [
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { a: 1 } } },
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' }, status: { conditions: {} } },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p2', namespace: 'tenant-a' },
        spec: { containers: [{ name: 'c', resources: { requests: { cpu: {} } } }] },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'd', namespace: 'kube-system' },
        status: { numberReady: { toString: 'x' } },
      },
    ];
    expect(describeMalformedRequest(cellBody(broken))).to.equal(
      [
        'request.related["Node.v1"]["n1"].metadata.labels: ["a"] must be a string, got number',
        'request.related["Node.v1"]["n2"].status.conditions: must be an array, got object',
        'request.related["Pod.v1"]["tenant-a/p2"].spec.containers[0].resources.requests: ["cpu"] must be a quantity (string or number), got object',
        'request.related["DaemonSet.apps/v1"]["kube-system/d"].status.numberReady: must be a number, got object',
      ].join('; '),
    );
  });
});
