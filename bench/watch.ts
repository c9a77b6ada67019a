/**
 * Watching the stack's apiserver as the benchmark's admin user: a kept-alive client-certificate
 * connection from the stack's kubeconfig, and a watch that stamps each event as it arrives and
 * restarts when the apiserver ends it.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { parse } from 'yaml';
import type { KubeObject } from '../harness/simulate/index.js';

export interface AdminConnection {
  server: URL;
  agent: https.Agent;
}

export function adminConnection(kubeconfigPath: string): AdminConnection {
  const config = parse(readFileSync(kubeconfigPath, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  };
  const decode = (data: string | undefined) => Buffer.from(data ?? '', 'base64');
  return {
    server: new URL(config.clusters[0]?.cluster.server ?? ''),
    agent: new https.Agent({
      keepAlive: true,
      ca: decode(config.clusters[0]?.cluster['certificate-authority-data']),
      cert: decode(config.users[0]?.user['client-certificate-data']),
      key: decode(config.users[0]?.user['client-key-data']),
    }),
  };
}

export type WatchHandler = (
  type: string,
  object: KubeObject & Record<string, unknown>,
  at: number,
) => void;

/**
 * A watch of every object at `path` (all namespaces), restarted when the apiserver ends it. Each
 * event is stamped with Date.now() as it arrives; a restart replays the objects as ADDED.
 */
export class Watch {
  private request: ReturnType<typeof https.request> | undefined;
  private stopped = false;

  constructor(
    private readonly connection: AdminConnection,
    private readonly path: string,
    private readonly onEvent: WatchHandler,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    if (this.stopped) return;
    const { server, agent } = this.connection;
    let buffer = '';
    const request = https.request(
      {
        agent,
        host: server.hostname,
        port: server.port,
        method: 'GET',
        path: `${this.path}?watch=true`,
        headers: { accept: 'application/json' },
      },
      (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          const at = Date.now();
          buffer += chunk;
          let newline = buffer.indexOf('\n');
          while (newline >= 0) {
            const line = buffer.slice(0, newline);
            buffer = buffer.slice(newline + 1);
            if (line.trim() !== '') {
              const event = JSON.parse(line) as {
                type: string;
                object: KubeObject & Record<string, unknown>;
              };
              this.onEvent(event.type, event.object, at);
            }
            newline = buffer.indexOf('\n');
          }
        });
        response.on('end', () => this.restart());
        response.on('error', () => this.restart());
      },
    );
    request.on('error', (error) => {
      if (!this.stopped) this.log(`watch ${this.path}: ${error.message}; restarting`);
      this.restart();
    });
    request.end();
    this.request = request;
  }

  private restart(): void {
    if (this.stopped) return;
    setTimeout(() => this.start(), 200).unref();
  }

  stop(): void {
    this.stopped = true;
    this.request?.destroy();
  }
}
