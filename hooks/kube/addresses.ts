/**
 * The addresses KubeCell writes into a status or splices into a server URL (issue 23): a Node's
 * InternalIP in a Cell's status.nodeAddresses, a VirtualCluster's endpoint address in
 * status.resolved, status.endpoint and the published kubeconfig's `server:`, and the port beside
 * it (a Service's NodePort, as observed or fed back through a ManifestWork). Node addresses and
 * agent reports come from outside the hook server's trust, and a value such as
 * `[::1]\u2028    proxy-url: http://evil.example` written into a kubeconfig line would become a
 * field of its own; so each is checked here before it is written or used.
 *
 * The checks are at least as strict as the CRD schemas (schemas/common.schema.json `ipAddress`
 * and `endpointAddress`), so anything they pass the apiserver accepts too:
 *
 * - the apiserver's `ipv4` format takes what Go's `ParseIPSloppy` takes, leading zeros included
 *   (`010.0.0.1`, which some parsers read as octal); here, as in ajv-formats, they are refused;
 * - its `ipv6` format (`net.ParseIP`) refuses a zone (`fe80::1%eth0`); Node's `isIPv6` accepts
 *   one, so a `%` is refused here. A zone names an interface of one host: no client elsewhere
 *   can use it;
 * - a hostname is DNS-1123 (lowercase) with labels of at most 63 characters, and its last label
 *   starts with a letter (RFC 1123 § 2.1: a top-level label is alphabetic): a URL parser takes
 *   `1.2.3.999`, `2130706433` or `a.0x7f` for an IPv4 address (WHATWG URL, "ends in a number"),
 *   and a DNS pattern alone would pass `010.0.0.1`. The schema's pattern says the same.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Longest DNS name (RFC 1123 § 2.1, and the schema's maxLength). */
const HOSTNAME_CHARS = 253;
const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** An IPv4 address in dotted-decimal form (no leading zeros) or an IPv6 address (no zone). */
export function isIpAddress(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  return isIPv4(value) || (isIPv6(value) && !value.includes('%'));
}

/** A DNS-1123 hostname that no URL parser would read as an IP address. */
export function isDnsHostname(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > HOSTNAME_CHARS) {
    return false;
  }
  const labels = value.split('.');
  const last = labels[labels.length - 1] ?? '';
  return labels.every((label) => LABEL.test(label)) && /^[a-z]/.test(last);
}

/** What a VirtualCluster's endpoint (and so a kubeconfig's server URL) may be built from. */
export function isEndpointAddress(value: unknown): value is string {
  return isIpAddress(value) || isDnsHostname(value);
}

/** A TCP or UDP port number: an integer from 1 to 65535 (a NodePort, a Service port). */
export function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}
