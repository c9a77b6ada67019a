/**
 * Settings of the kubecell-host-namespace controller, read once at startup from the environment.
 *
 * | Variable                     | Default          | Meaning                                                             |
 * |------------------------------|------------------|---------------------------------------------------------------------|
 * | `KUBECELL_PSA_LEVEL`         | `baseline`       | Pod Security level of every host namespace (enforce, warn, audit)   |
 * | `KUBECELL_HOST_EGRESS_CIDRS` | `0.0.0.0/0,::/0` | Egress allowed beyond DNS and the namespace itself; `none` for none |
 *
 * Invalid values throw a `ConfigError` (the hook server's) naming the variable and the fix, so
 * the server refuses to start rather than apply a baseline nobody asked for.
 */
import { isIP } from 'node:net';
import { ConfigError } from '../server/config.js';

export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

export interface HostNamespaceConfig {
  /** The Pod Security Standard enforced (and warned about, and audited) in host namespaces. */
  podSecurityLevel: PodSecurityLevel;
  /** Destinations (CIDRs) host-namespace pods may reach besides DNS and their own namespace. */
  egressCidrs: string[];
}

export const HOST_NAMESPACE_DEFAULTS = {
  KUBECELL_PSA_LEVEL: 'baseline',
  KUBECELL_HOST_EGRESS_CIDRS: '0.0.0.0/0,::/0',
} as const;

export const DEFAULT_HOST_NAMESPACE_CONFIG: Readonly<HostNamespaceConfig> = Object.freeze({
  podSecurityLevel: 'baseline',
  egressCidrs: ['0.0.0.0/0', '::/0'],
});

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

  const cidrsText = read('KUBECELL_HOST_EGRESS_CIDRS');
  const egressCidrs =
    cidrsText === 'none'
      ? []
      : cidrsText
          .split(',')
          .map((cidr) => cidr.trim())
          .filter((cidr) => cidr !== '');
  if (cidrsText !== 'none' && egressCidrs.length === 0) {
    problems.push(
      `KUBECELL_HOST_EGRESS_CIDRS="${cidrsText}": no CIDR given; write none to allow no egress ` +
        'beyond DNS and the namespace itself',
    );
  }
  for (const cidr of egressCidrs) {
    const problem = cidrProblem(cidr);
    if (problem) {
      problems.push(
        `KUBECELL_HOST_EGRESS_CIDRS: ${problem}; give a comma-separated list of CIDRs, or none`,
      );
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return { podSecurityLevel: level as PodSecurityLevel, egressCidrs: [...new Set(egressCidrs)] };
}
