// Whether NetworkPolicies admit a connection, by the rules of the NetworkPolicy API
// (https://kubernetes.io/docs/concepts/services-networking/network-policies/): a Pod that no
// Ingress policy selects accepts everything; a selected Pod accepts a connection that some rule
// of some policy selecting it admits (policies add up). A rule admits a source that one of its
// peers matches (no `from`: every source) on one of its ports (no `ports`: every port). A peer
// with a namespaceSelector and a podSelector matches Pods that satisfy both; with a podSelector
// only, Pods of the policy's own namespace; with a namespaceSelector only, every Pod of the
// namespaces it selects. ipBlock peers match no Pod here (they name addresses, not Pods).
import { selectorMatches, type Json, type LabelSelector } from './support.js';

export interface PodRef {
  namespace: string;
  /** The namespace's labels (kubernetes.io/metadata.name is added, as the apiserver does). */
  namespaceLabels?: Record<string, string>;
  labels: Record<string, string>;
}

export interface Destination extends PodRef {
  /** The container ports, for policies that name a port. */
  ports: Array<{ name?: string; containerPort: number; protocol?: string }>;
}

function withLabels(labels: Record<string, string>): Json {
  return { metadata: { labels } };
}

function namespaceObject(pod: PodRef): Json {
  return withLabels({
    ...pod.namespaceLabels,
    'kubernetes.io/metadata.name': pod.namespace,
  });
}

function peerMatches(peer: Json, policyNamespace: string, source: PodRef): boolean {
  const namespaceSelector = peer.namespaceSelector as LabelSelector | undefined;
  const podSelector = peer.podSelector as LabelSelector | undefined;
  if (namespaceSelector === undefined && podSelector === undefined) return false; // ipBlock
  const namespaceOk =
    namespaceSelector === undefined
      ? source.namespace === policyNamespace
      : selectorMatches(namespaceSelector, namespaceObject(source));
  return namespaceOk && selectorMatches(podSelector, withLabels(source.labels));
}

function portMatches(entry: Json, destination: Destination, port: number): boolean {
  if ((entry.protocol ?? 'TCP') !== 'TCP') return false;
  if (entry.port === undefined) return true;
  const container = destination.ports.find((candidate) => candidate.containerPort === port);
  return typeof entry.port === 'number' ? entry.port === port : container?.name === entry.port;
}

function selects(policy: Json, destination: Destination): boolean {
  const metadata = policy.metadata as Json;
  const spec = policy.spec as Json;
  const types = (spec.policyTypes as string[] | undefined) ?? ['Ingress'];
  return (
    metadata.namespace === destination.namespace &&
    types.includes('Ingress') &&
    selectorMatches(spec.podSelector as LabelSelector, withLabels(destination.labels))
  );
}

/** Whether `policies` admit a TCP connection from `source` to `destination`'s `port`. */
export function ingressAllowed(
  policies: readonly Json[],
  source: PodRef,
  destination: Destination,
  port: number,
): boolean {
  const selecting = policies.filter(
    (policy) => policy.kind === 'NetworkPolicy' && selects(policy, destination),
  );
  if (selecting.length === 0) return true;
  return selecting.some((policy) =>
    (((policy.spec as Json).ingress ?? []) as Json[]).some((rule) => {
      const from = rule.from as Json[] | undefined;
      const ports = rule.ports as Json[] | undefined;
      const sourceOk =
        from === undefined ||
        from.some((peer) => peerMatches(peer, String((policy.metadata as Json).namespace), source));
      const portOk =
        ports === undefined || ports.some((entry) => portMatches(entry, destination, port));
      return sourceOk && portOk;
    }),
  );
}

/** The Pods of a Deployment, as a destination: its namespace, Pod labels and container ports. */
export function podsOf(deployment: Json): Destination {
  const template = (deployment.spec as Json).template as Json;
  const containers = ((template.spec as Json).containers ?? []) as Json[];
  return {
    namespace: String((deployment.metadata as Json).namespace),
    labels: (template.metadata as Json).labels as Record<string, string>,
    ports: containers.flatMap((container) => (container.ports ?? []) as Destination['ports']),
  };
}
