/**
 * A stand-in for the apiserver the admission webhook reads during the HTTP benchmark: over
 * HTTPS like the real one, it answers the webhook's lookups (bench/bodies-admission.ts) with
 * bytes serialised once, and 404 with a Status to anything else. A watch (`?watch=true`) of a
 * collection it lists is held open without events (nothing changes during the benchmark) and
 * ended after its `timeoutSeconds`, as the apiserver ends it, so the webhook's watch cache
 * (hooks/admission/cached-lookup.ts) syncs and stays synced. It does no authentication,
 * authorisation or storage, so a lookup costs the webhook what its own client does (a request
 * on a kept-alive connection, hooks/kube/connection-reuse.ts) and the apiserver's share is near
 * nothing; the benchmark reports the stub's CPU per review beside the webhook's.
 *
 *   node --import tsx bench/apiserver-stub.ts <port> <tls port> <cert file> <key file>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { webhookLookups } from './bodies-admission.js';
import { listenPlainAndTls } from './floor-tls.js';

const NOT_FOUND = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'not found',
  reason: 'NotFound',
  code: 404,
});

/** The apiserver's default when a watch names no `timeoutSeconds` is longer; this is plenty. */
const DEFAULT_WATCH_SECONDS = 300;

/**
 * Answers GET of the paths of `objects` (other query parameters ignored), holds a watch of
 * any of them open (see the module comment); readiness on GET /.
 */
export function apiserverStub(objects: Record<string, unknown>): RequestListener {
  const answers = new Map(
    Object.entries(objects).map(([where, object]) => [where, JSON.stringify(object)]),
  );
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    const where = url.pathname;
    const answer = req.method === 'GET' ? answers.get(where) : undefined;
    req.resume();
    if (where === '/' && req.method === 'GET') {
      res.writeHead(200).end('ok');
      return;
    }
    const watch = url.searchParams.get('watch');
    if (answer !== undefined && (watch === 'true' || watch === '1')) {
      const seconds = Number(url.searchParams.get('timeoutSeconds') ?? DEFAULT_WATCH_SECONDS);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      const end = setTimeout(() => res.end(), seconds * 1000);
      res.on('close', () => clearTimeout(end));
      return;
    }
    res.writeHead(answer === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(answer ?? NOT_FOUND);
  };
}

/** A kubeconfig for the stub at 127.0.0.1:`tlsPort`, trusting `cert`, written to `file`. */
export function writeStubKubeconfig(file: string, tlsPort: number, cert: string): string {
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'bench',
      contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'bench' } }],
      clusters: [
        {
          name: 'bench',
          cluster: {
            server: `https://127.0.0.1:${tlsPort}`,
            'certificate-authority-data': Buffer.from(cert).toString('base64'),
          },
        },
      ],
      users: [{ name: 'bench', user: { token: 'bench' } }],
    }),
  );
  return file;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [port, tlsPort, certFile, keyFile] = process.argv.slice(2) as [
    string,
    string,
    string,
    string,
  ];
  listenPlainAndTls(apiserverStub(webhookLookups(new Date())), Number(port), {
    port: Number(tlsPort),
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
  });
}
