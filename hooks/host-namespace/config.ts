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
import { ConfigError } from '../config/env-reader.js';

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
  KUBECELL_K3K_CONTROLLER: 'k3k-system/k3k',
} as const;

export const DEFAULT_HOST_NAMESPACE_CONFIG: Readonly<HostNamespaceConfig> = Object.freeze({
  podSecurityLevel: 'baseline',
  egressCidrs: ['0.0.0.0/0', '::/0'],
  apiClientCidrs: ['0.0.0.0/0', '::/0'],
  k3kNamespace: 'k3k-system',
});

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

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

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadHostNamespaceConfig(env: NodeJS.ProcessEnv = process.env): HostNamespaceConfig {
  const problems: string[] = [];
  const read = (name: keyof typeof HOST_NAMESPACE_DEFAULTS): string => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? HOST_NAMESPACE_DEFAULTS[name] : value;
  };

  const level = read('KUBECELL_PSA_LEVEL');
  const isLevel = (POD_SECURITY_LEVELS as readonly string[]).includes(level);
  if (!isLevel) {
    problems.push(
      `KUBECELL_PSA_LEVEL="${level}": expected one of ${POD_SECURITY_LEVELS.join(', ')} ` +
        '(the Pod Security Standard level of host namespaces)',
    );
  }

  const cidrs = (
    name: 'KUBECELL_HOST_EGRESS_CIDRS' | 'KUBECELL_API_CLIENT_CIDRS',
    noneMeans: string,
  ): string[] => {
    const text = read(name);
    const list =
      text === 'none'
        ? []
        : text
            .split(',')
            .map((cidr) => cidr.trim())
            .filter((cidr) => cidr !== '');
    if (text !== 'none' && list.length === 0) {
      problems.push(`${name}="${text}": no CIDR given; write none to allow ${noneMeans}`);
    }
    for (const cidr of list) {
      const problem = cidrProblem(cidr);
      if (problem) {
        problems.push(`${name}: ${problem}; give a comma-separated list of CIDRs, or none`);
      }
    }
    return [...new Set(list)];
  };
  const egressCidrs = cidrs(
    'KUBECELL_HOST_EGRESS_CIDRS',
    'no egress beyond DNS and the namespace itself',
  );
  const apiClientCidrs = cidrs(
    'KUBECELL_API_CLIENT_CIDRS',
    "no client of the API NodePort (only the namespace's own pods and the k3k controller)",
  );

  // The same variable the Cell controller reads (hooks/cell/config.ts): k3k's controller runs in
  // its namespace.
  const controller = read('KUBECELL_K3K_CONTROLLER');
  const [k3kNamespace, controllerName, extra] = controller.split('/');
  if (!k3kNamespace || !controllerName || extra !== undefined || !DNS_LABEL.test(k3kNamespace)) {
    problems.push(
      `KUBECELL_K3K_CONTROLLER=${JSON.stringify(controller)} is not <namespace>/<name>; set it ` +
        `like ${HOST_NAMESPACE_DEFAULTS.KUBECELL_K3K_CONTROLLER} (the default)`,
    );
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    podSecurityLevel: level as PodSecurityLevel,
    egressCidrs,
    apiClientCidrs,
    k3kNamespace: k3kNamespace ?? DEFAULT_HOST_NAMESPACE_CONFIG.k3kNamespace,
  };
}
