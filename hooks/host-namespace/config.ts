/**
 * Settings of the kubecell-host-namespace controller, read once at startup from the environment.
 *
 * | Variable                     | Default          | Meaning                                                                   |
 * |------------------------------|------------------|---------------------------------------------------------------------------|
 * | `KUBECELL_PSA_LEVEL`         | `baseline`       | Pod Security level of every host namespace (enforce, warn, audit)         |
 * | `KUBECELL_HOST_EGRESS_CIDRS` | `0.0.0.0/0,::/0` | Egress allowed beyond DNS and the namespace itself; `none` for none       |
 * | `KUBECELL_API_CLIENT_CIDRS`  | `0.0.0.0/0,::/0` | Sources that may reach the k3k API (6443) through the NodePort; `none`    |
 * | `KUBECELL_K3K_CONTROLLER`    | `k3k-system/k3k` | Its namespace may reach the k3k API (k3k reads the bootstrap data)        |
 *
 * Invalid values throw a `ConfigError` (the hook server's) naming the variable and the fix, so
 * the server refuses to start rather than apply a baseline nobody asked for.
 */
import { isIP } from 'node:net';
import { DEFAULT_K3K_CONTROLLER, EnvReader } from '../config/env-reader.js';

export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

export interface HostNamespaceConfig {
  /** The Pod Security Standard enforced (and warned about, and audited) in host namespaces. */
  podSecurityLevel: PodSecurityLevel;
  /** Destinations (CIDRs) host-namespace pods may reach besides DNS and their own namespace. */
  egressCidrs: string[];
  /**
   * Sources (CIDRs) that may reach k3k's server pods on 6443: the clients of the API NodePort,
   * and the Nodes' addresses, which NodePort traffic carries once kube-proxy masquerades it.
   */
  apiClientCidrs: string[];
  /** The namespace of the k3k controller, which calls its server pods' API. */
  k3kNamespace: string;
}

export const HOST_NAMESPACE_DEFAULTS = {
  KUBECELL_PSA_LEVEL: 'baseline',
  KUBECELL_HOST_EGRESS_CIDRS: '0.0.0.0/0,::/0',
  KUBECELL_API_CLIENT_CIDRS: '0.0.0.0/0,::/0',
} as const;

export const DEFAULT_HOST_NAMESPACE_CONFIG: Readonly<HostNamespaceConfig> = Object.freeze({
  podSecurityLevel: 'baseline',
  egressCidrs: ['0.0.0.0/0', '::/0'],
  apiClientCidrs: ['0.0.0.0/0', '::/0'],
  k3kNamespace: DEFAULT_K3K_CONTROLLER.namespace,
});

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadHostNamespaceConfig(env: NodeJS.ProcessEnv = process.env): HostNamespaceConfig {
  const reader = new EnvReader(env);
  const config: HostNamespaceConfig = {
    podSecurityLevel: podSecurityLevel(reader),
    egressCidrs: cidrList(
      reader,
      'KUBECELL_HOST_EGRESS_CIDRS',
      'no egress beyond DNS and the namespace itself',
    ),
    apiClientCidrs: cidrList(
      reader,
      'KUBECELL_API_CLIENT_CIDRS',
      "no client of the API NodePort (only the namespace's own pods and the k3k controller)",
    ),
    // The same variable the Cell controller reads (hooks/cell/config.ts): k3k's controller runs
    // in its namespace.
    k3kNamespace: reader.k3kController().namespace,
  };
  reader.finish();
  return config;
}

function podSecurityLevel(reader: EnvReader): PodSecurityLevel {
  const name = 'KUBECELL_PSA_LEVEL';
  const level = reader.text(name, HOST_NAMESPACE_DEFAULTS[name]);
  if ((POD_SECURITY_LEVELS as readonly string[]).includes(level)) return level as PodSecurityLevel;
  reader.problem(
    `${name}="${level}": expected one of ${POD_SECURITY_LEVELS.join(', ')} ` +
      '(the Pod Security Standard level of host namespaces)',
  );
  return DEFAULT_HOST_NAMESPACE_CONFIG.podSecurityLevel;
}

/** A comma-separated list of CIDRs, or `none` (an empty list, which allows `noneMeans`). */
function cidrList(
  reader: EnvReader,
  name: 'KUBECELL_HOST_EGRESS_CIDRS' | 'KUBECELL_API_CLIENT_CIDRS',
  noneMeans: string,
): string[] {
  const text = reader.text(name, HOST_NAMESPACE_DEFAULTS[name]);
  if (text === 'none') return [];
  const list = text
    .split(',')
    .map((cidr) => cidr.trim())
    .filter((cidr) => cidr !== '');
  if (list.length === 0) {
    reader.problem(`${name}="${text}": no CIDR given; write none to allow ${noneMeans}`);
  }
  for (const cidr of list) {
    const problem = cidrProblem(cidr);
    if (problem) {
      reader.problem(`${name}: ${problem}; give a comma-separated list of CIDRs, or none`);
    }
  }
  return [...new Set(list)];
}

/** `10.0.0.0/8` or `fd00::/8`; returns a problem, or undefined when the CIDR is valid. */
function cidrProblem(cidr: string): string | undefined {
  const [address, prefix, extra] = cidr.split('/');
  const family = address === undefined ? 0 : isIP(address);
  if (family === 0 || prefix === undefined || extra !== undefined || !/^\d{1,3}$/.test(prefix)) {
    return `"${cidr}" is not a CIDR (address/prefix, e.g. 10.0.0.0/8 or fd00::/8)`;
  }
  const max = family === 4 ? 32 : 128;
  if (Number(prefix) > max) return `"${cidr}": the prefix length is at most ${max}`;
  return undefined;
}
