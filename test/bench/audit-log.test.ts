/**
 * Metacontroller's requests counted from kube-apiserver's audit log (bench/audit-log.ts): one
 * user's, in one window, by verb and resource and by response code class. The fixture events
 * have the shape kube-apiserver writes with --audit-log-format=json at level Metadata.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  auditLogOffset,
  countAuditRequests,
  perEach,
  readAuditRequests,
} from '../../bench/audit-log.js';

const METACONTROLLER = 'system:serviceaccount:metacontroller:metacontroller';
const START = Date.parse('2026-03-01T10:00:00Z');

interface Request {
  verb: string;
  resource?: string;
  subresource?: string;
  apiGroup?: string;
  uri?: string;
  code?: number;
  /** Seconds after START the apiserver received it. */
  at: number;
  user?: string;
  stage?: string;
}

let auditId = 0;

/** One audit event line as kube-apiserver writes it (microsecond timestamps). */
function event(request: Request): string {
  const received = new Date(START + request.at * 1000).toISOString().replace('Z', '123Z');
  const objectRef = request.resource
    ? {
        resource: request.resource,
        namespace: 'bench-n50-00',
        name: 'vc',
        ...(request.apiGroup ? { apiGroup: request.apiGroup, apiVersion: 'v1beta1' } : {}),
        ...(request.subresource ? { subresource: request.subresource } : {}),
      }
    : undefined;
  return `${JSON.stringify({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: `00000000-0000-0000-0000-${String(auditId++).padStart(12, '0')}`,
    stage: request.stage ?? 'ResponseComplete',
    requestURI: request.uri ?? `/apis/x/${request.resource ?? ''}`,
    verb: request.verb,
    user: {
      username: request.user ?? METACONTROLLER,
      uid: '6b1f0c1e-0000-0000-0000-000000000000',
      groups: ['system:serviceaccounts', 'system:authenticated'],
    },
    sourceIPs: ['127.0.0.1'],
    userAgent: 'metacontroller/v0.0.0 (linux/amd64) kubernetes/$Format',
    ...(objectRef ? { objectRef } : {}),
    responseStatus: { metadata: {}, ...(request.code ? { code: request.code } : {}) },
    requestReceivedTimestamp: received,
    stageTimestamp: received,
    annotations: { 'authorization.k8s.io/decision': 'allow' },
  })}\n`;
}

const status = { resource: 'virtualclusters', apiGroup: 'kubecell.io', subresource: 'status' };
const k3k = { resource: 'clusters', apiGroup: 'k3k.io' };

const LOG = [
  // Before the window: not counted.
  event({ verb: 'update', ...status, code: 200, at: -1 }),
  event({ verb: 'update', ...status, code: 200, at: 0 }),
  event({ verb: 'update', ...status, code: 409, at: 1 }),
  event({ verb: 'update', ...status, code: 200, at: 2 }),
  event({ verb: 'patch', ...k3k, code: 200, at: 1.5 }),
  event({ verb: 'get', resource: 'virtualclusters', apiGroup: 'kubecell.io', code: 200, at: 3 }),
  event({ verb: 'create', resource: 'resourcequotas', code: 201, at: 3 }),
  event({ verb: 'get', uri: '/apis?timeout=32s', code: 200, at: 4 }),
  // Another user, another stage of a counted request, and after the window: not counted.
  event({ verb: 'patch', ...k3k, code: 200, at: 2, user: 'kubecell-test-admin' }),
  event({ verb: 'watch', ...k3k, at: 2, stage: 'ResponseStarted' }),
  event({ verb: 'update', ...status, code: 200, at: 10.001 }),
];
const WINDOW = { user: METACONTROLLER, fromMs: START, toMs: START + 10_000 };

describe("bench: Metacontroller's requests from the apiserver's audit log", () => {
  it('counts the user’s requests in the window by verb and resource, with subresource and group', () => {
    const counts = countAuditRequests(LOG.join(''), WINDOW);
    expect(counts.byRequest).to.deep.equal({
      'update virtualclusters/status': 3,
      'patch clusters.k3k.io': 1,
      'get virtualclusters': 1,
      'create resourcequotas': 1,
      'get /apis': 1,
    });
    expect(counts.total).to.equal(7);
  });

  it('counts by response code class, and names the requests not answered with 2xx', () => {
    const counts = countAuditRequests(LOG.join(''), WINDOW);
    expect(counts.byCodeClass).to.deep.equal({ '2xx': 6, '4xx': 1 });
    expect(counts.notOk).to.deep.equal({ 'update virtualclusters/status 409': 1 });
  });

  it('divides the counts per VirtualCluster', () => {
    expect(perEach({ 'update virtualclusters/status': 3, 'get /apis': 1 }, 2)).to.deep.equal({
      'update virtualclusters/status': 1.5,
      'get /apis': 0.5,
    });
  });

  it('reads only what was written after an offset, and leaves out a line still being written', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kubecell-audit-test-'));
    try {
      const file = path.join(dir, 'audit.log');
      writeFileSync(file, LOG.slice(0, 3).join(''));
      const offset = auditLogOffset(file);
      const half = event({ verb: 'get', ...k3k, code: 200, at: 5 });
      appendFileSync(file, LOG.slice(3, 5).join('') + half.slice(0, 40));
      const counts = readAuditRequests(file, WINDOW, offset);
      expect(counts.byRequest).to.deep.equal({
        'update virtualclusters/status': 1,
        'patch clusters.k3k.io': 1,
      });
      // An offset inside a line (taken mid-write) starts at the next whole line.
      const inside = readAuditRequests(file, WINDOW, offset + 10);
      expect(inside.byRequest).to.deep.equal({ 'patch clusters.k3k.io': 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
