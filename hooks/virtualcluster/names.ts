/**
 * Names of a VirtualCluster's children and of the k3k objects it reads. All are pure functions
 * of the VirtualCluster's name (and UID for the Secret), so customize (spec-only) and sync
 * agree on them.
 */
import { createHash } from 'node:crypto';

/**
 * The name k3k gives its object `<suffix>` of a Cluster: `k3k-<cluster>-<suffix>`, and when
 * that is 64 characters or longer, its first 57 (or 56) characters, a dash and the first 5
 * (or 6) hex digits of the full name's SHA-256 (k3k's `SafeConcatNameWithPrefix`).
 */
export function k3kObjectName(clusterName: string, ...suffixes: string[]): string {
  const full = ['k3k', clusterName, ...suffixes].filter((part) => part !== '').join('-');
  if (full.length < 64) return full;
  const digest = createHash('sha256').update(full).digest('hex');
  const cut = full.charAt(56);
  return /[a-z0-9]/.test(cut)
    ? `${full.slice(0, 57)}-${digest.slice(0, 5)}`
    : `${full.slice(0, 56)}-${digest.slice(0, 6)}`;
}

/** k3k's admin kubeconfig Secret of a Cluster (key `kubeconfig.yaml`). */
export function k3kKubeconfigSecretName(clusterName: string): string {
  return k3kObjectName(clusterName, 'kubeconfig');
}

/**
 * `<prefix><middle><suffix>`, shortened to `max` characters when needed by cutting `middle`
 * and appending 8 hex digits of the full name's SHA-256, so distinct long names stay
 * distinct. `dnsLabel` additionally turns dots into dashes (Service names are DNS labels; a
 * namespace hosts one VirtualCluster, so `a.b` and `a-b` cannot collide there).
 */
export function boundedName(
  prefix: string,
  middle: string,
  suffix: string,
  max: number,
  dnsLabel = false,
): string {
  const inner = dnsLabel ? middle.replace(/\./g, '-') : middle;
  const full = `${prefix}${inner}${suffix}`;
  if (full.length <= max) return full;
  const digest = createHash('sha256').update(`${prefix}${middle}${suffix}`).digest('hex');
  const room = max - prefix.length - suffix.length - 9;
  const cut = inner.slice(0, Math.max(0, room)).replace(/[-.]+$/, '');
  return `${prefix}${cut}-${digest.slice(0, 8)}${suffix}`;
}

export interface ChildNames {
  /** The k3k Cluster: the VirtualCluster's own name (k3k names its objects after it). */
  cluster: string;
  resourceQuota: string;
  limitRange: string;
  /** The NodePort Service of the API server (a DNS label, at most 63 characters). */
  service: string;
  /** `kubecell-<vc>-<uid>-admin-kubeconfig`. */
  secret: string;
}

const DNS_SUBDOMAIN_MAX = 253;
const DNS_LABEL_MAX = 63;

export function childNames(name: string, uid: string | undefined): ChildNames {
  return {
    cluster: name,
    resourceQuota: boundedName('kubecell-', name, '-quota', DNS_SUBDOMAIN_MAX),
    limitRange: boundedName('kubecell-', name, '-defaults', DNS_SUBDOMAIN_MAX),
    service: boundedName('kubecell-', name, '-api', DNS_LABEL_MAX, true),
    secret: boundedName(
      'kubecell-',
      name,
      `-${uid ?? 'no-uid'}-admin-kubeconfig`,
      DNS_SUBDOMAIN_MAX,
    ),
  };
}
