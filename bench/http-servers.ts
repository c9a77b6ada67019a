/**
 * The processes of the HTTP benchmark: the hook server as shipped (`hooks/main.ts`, one process
 * serving the hooks over HTTP and the admission webhook over HTTPS, logging one info line per
 * call to /dev/null as in production), the floor (bench/floor-server.ts, over HTTP and HTTPS
 * with the same certificate) and, for the webhook's lookups, a stand-in apiserver
 * (bench/apiserver-stub.ts).
 *
 * The hook server runs with the product's defaults but where the largest cases need more, each
 * raised for this benchmark only and recorded in HOOK_SERVER_SETTINGS:
 * - KUBECELL_BODY_LIMIT 256mb: a 5,000-Node Cell's sync request is 146 MB, over the default
 *   64mb (the product answers 413 to it unless an operator raises the limit);
 * - KUBECELL_BODY_BUDGET: the bytes the benchmark lets be in flight (maxBodyBytesInFlight), so
 *   that 64 concurrent 29-MB requests (1,000 Nodes) are not shed with 429 at the default 96mb;
 * - KUBECELL_BODY_TIMEOUT_SECONDS and KUBECELL_REQUEST_TIMEOUT_SECONDS 600: at concurrency 64 a
 *   request waits for the 63 before it, 30 s and more for a 1,000-Node Cell, past the defaults
 *   (20 and 30 s), which would cut the queue instead of measuring it.
 */
import path from 'node:path';
import { rmSync } from 'node:fs';
import { selfSignedCertificate } from '../hooks/admission/testing.js';
import { freeLoopbackPorts } from '../harness/cluster/ports.js';
import { writeStubKubeconfig } from './apiserver-stub.js';
import type { Listener } from './http-cases.js';
import { startServer, type Server } from './processes.js';

export const HOOK_SERVER_SETTINGS = {
  KUBECELL_LOG_LEVEL: 'info',
  KUBECELL_MAX_INFLIGHT: '64',
  KUBECELL_BODY_LIMIT: '256mb',
  KUBECELL_BODY_TIMEOUT_SECONDS: '600',
  KUBECELL_REQUEST_TIMEOUT_SECONDS: '600',
} as const;

/** One server process and the base URL of one of its listeners. */
export interface Target {
  server: Server;
  /** `http://127.0.0.1:<port>` or `https://…`. */
  base: string;
}

export interface HttpServers {
  targets: Record<Listener, { hook: Target; floor: Target }>;
  /** The apiserver stub the webhook's lookups read. */
  apiserver: Server;
  /** The certificate the HTTPS listeners serve (PEM), to trust it. */
  ca: string;
  stop(): Promise<void>;
}

/** Starts every process; stops those already started when one fails. */
export async function startHttpServers(maxBodyBytesInFlight: number): Promise<HttpServers> {
  const [hookPort, webhookPort, floorPort, floorTlsPort, stubPort, stubTlsPort] =
    (await freeLoopbackPorts(6)) as [number, number, number, number, number, number];
  const cert = selfSignedCertificate('kubecell-hooks.kubecell-system.svc');
  const started: Server[] = [];
  const stop = async () => {
    for (const server of started.reverse()) await server.stop();
    rmSync(cert.dir, { recursive: true, force: true });
  };
  const start = async (options: Parameters<typeof startServer>[0]) => {
    const server = await startServer(options);
    started.push(server);
    return server;
  };
  const tlsArgs = [cert.certFile, cert.keyFile];
  try {
    const apiserver = await start({
      name: 'apiserver stub',
      script: 'bench/apiserver-stub.ts',
      args: [String(stubPort), String(stubTlsPort), ...tlsArgs],
      port: stubPort,
      readyPath: '/',
    });
    const kubeconfig = path.join(cert.dir, 'kubeconfig');
    writeStubKubeconfig(kubeconfig, stubTlsPort, cert.cert);
    const hook = await start({
      name: 'hook server',
      script: 'hooks/main.ts',
      port: hookPort,
      readyPath: '/readyz',
      env: {
        ...HOOK_SERVER_SETTINGS,
        KUBECELL_BODY_BUDGET: `${Math.ceil(maxBodyBytesInFlight / 1024 ** 2)}mb`,
        KUBECELL_PORT: String(hookPort),
        KUBECELL_WEBHOOK_PORT: String(webhookPort),
        KUBECELL_TLS_CERT_FILE: cert.certFile,
        KUBECELL_TLS_KEY_FILE: cert.keyFile,
        KUBECONFIG: kubeconfig,
      },
    });
    const floor = await start({
      name: 'floor server',
      script: 'bench/floor-server.ts',
      args: [String(floorPort), String(floorTlsPort), ...tlsArgs],
      port: floorPort,
      readyPath: '/',
    });
    const https = (server: Server, port: number): Target => ({
      server,
      base: `https://127.0.0.1:${port}`,
    });
    return {
      targets: {
        hooks: {
          hook: { server: hook, base: hook.base },
          floor: { server: floor, base: floor.base },
        },
        webhook: { hook: https(hook, webhookPort), floor: https(floor, floorTlsPort) },
      },
      apiserver,
      ca: cert.cert,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
