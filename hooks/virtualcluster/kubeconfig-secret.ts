/**
 * The published kubeconfig Secret of a VirtualCluster: a Secret's `kubeconfig.yaml` read without
 * quoting it (observe reads k3k's, the published one's and, on a ManifestWork Cell, the one fed
 * back sealed and opened), and the plan for the Secret a sync returns (render): k3k's kubeconfig
 * rewritten to the endpoint and the allowlist (kubeconfig.ts), kept as published, or none (and
 * why).
 */
import { keptChild } from '../metacontroller/kept-child.js';
import type { ResolvedPlacement } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { KUBECONFIG_KEY } from './constants.js';
import {
  canonicalKubeconfig,
  endpointUrl,
  rewriteKubeconfigServer,
  type KubeconfigRefusal,
} from './kubeconfig.js';
import { MAX_KUBECONFIG_BYTES } from './kubeconfig-policy.js';
import type { ChildNames } from './names.js';
import type { KubeconfigSecret, SecretObject } from './observe-children.js';

/** What a Secret's `kubeconfig.yaml` holds, read without quoting it. */
export type SecretKubeconfig =
  { ok: true; text: string } | { ok: false; refusal: KubeconfigRefusal; problem: string };

/** Base64 characters of the largest kubeconfig accepted. */
const MAX_ENCODED_LENGTH = 4 * Math.ceil(MAX_KUBECONFIG_BYTES / 3);

/** Decodes a Secret's `kubeconfig.yaml`. */
export function readSecretKubeconfig(secret: SecretObject | undefined): SecretKubeconfig {
  return readKubeconfigData(secret?.data?.[KUBECONFIG_KEY]);
}

/**
 * Decodes the base64 value of a Secret's `kubeconfig.yaml`. A value longer than the base64 of
 * 64 KiB is refused before it is decoded.
 */
export function readKubeconfigData(encoded: string | undefined): SecretKubeconfig {
  const unreadable: SecretKubeconfig = {
    ok: false,
    refusal: 'invalid',
    problem: `its data.${KUBECONFIG_KEY} is missing or not base64 UTF-8`,
  };
  if (encoded === undefined || encoded === '') return unreadable;
  if (encoded.length > MAX_ENCODED_LENGTH) {
    return {
      ok: false,
      refusal: 'rejected',
      problem: `its data.${KUBECONFIG_KEY} is ${encoded.length} base64 characters, more than the ${MAX_ENCODED_LENGTH} of the ${MAX_KUBECONFIG_BYTES} bytes (64 KiB) a kubeconfig may have`,
    };
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return unreadable;
  const bytes = Buffer.from(encoded, 'base64');
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? { ok: true, text } : unreadable;
}

/** The text of a Secret's `kubeconfig.yaml`, or undefined when absent, not decodable or too large. */
export function secretKubeconfig(secret: SecretObject | undefined): string | undefined {
  const read = readSecretKubeconfig(secret);
  return read.ok ? read.text : undefined;
}

/** Why the kubeconfig Secret is not rendered from k3k's: no port, k3k's missing or refused. */
export type SecretPlanWhy = 'k3kMissing' | 'k3kInvalid' | 'k3kRejected' | 'noPort';

export type SecretPlan =
  | { kind: 'render'; secret: KubernetesObject }
  | { kind: 'keep'; secret: KubernetesObject; why: SecretPlanWhy; problem?: string }
  | {
      kind: 'none';
      why: SecretPlanWhy;
      problem?: string;
      /** Why the observed published Secret was not kept (it would not be published today). */
      withdrawn?: string;
    };

/**
 * The admin kubeconfig Secret. Rendered once the NodePort is allocated and k3k's kubeconfig
 * is readable and passes the allowlist. Once published it is not withdrawn: when k3k's Secret
 * disappears or is refused (or the port is unknown), the published Secret is returned as
 * observed, unless it holds what would not be published today (unreadable, over 64 KiB, or a
 * field off the allowlist: edited by hand, or written by a release before the allowlist); that
 * one is withdrawn.
 */
export function planSecret(
  names: ChildNames,
  resolved: ResolvedPlacement,
  labels: Record<string, string>,
  port: number | undefined,
  source: SecretKubeconfig | undefined,
  published: KubeconfigSecret | undefined,
): SecretPlan {
  const keep = (why: SecretPlanWhy, problem?: string): SecretPlan => {
    const detail = problem === undefined ? {} : { problem };
    if (published === undefined) return { kind: 'none', why, ...detail };
    const kept = republished(published);
    return kept.ok
      ? { kind: 'keep', secret: kept.secret, why, ...detail }
      : { kind: 'none', why, ...detail, withdrawn: kept.problem };
  };
  if (port === undefined) return keep('noPort');
  if (source === undefined) return keep('k3kMissing');
  const rewritten = source.ok
    ? rewriteKubeconfigServer(source.text, endpointUrl(resolved.endpointAddress, port))
    : source;
  if (!rewritten.ok) {
    return keep(rewritten.refusal === 'rejected' ? 'k3kRejected' : 'k3kInvalid', rewritten.problem);
  }
  return {
    kind: 'render',
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: names.secret, namespace: resolved.hostNamespace, labels: { ...labels } },
      type: 'Opaque',
      data: { [KUBECONFIG_KEY]: Buffer.from(rewritten.text, 'utf8').toString('base64') },
    } as KubernetesObject,
  };
}

/**
 * The observed published Secret as it is kept: its kubeconfig written anew by KubeCell from its
 * own allowlisted values (the same text when KubeCell wrote it; a Secret of k3k's bytes from a
 * release before issue 23 is rewritten), and nothing else in its data. Not kept when it holds
 * what would not be published today (unreadable, too large, a character or field refused).
 */
function republished(
  published: KubeconfigSecret,
): { ok: true; secret: KubernetesObject } | { ok: false; problem: string } {
  const read = published.kubeconfig;
  const written = read.ok ? canonicalKubeconfig(read.text) : read;
  if (!written.ok) return written;
  const kept = keptChild(published.object) as KubernetesObject & { data?: Record<string, string> };
  kept.data = { [KUBECONFIG_KEY]: Buffer.from(written.text, 'utf8').toString('base64') };
  return { ok: true, secret: kept };
}
