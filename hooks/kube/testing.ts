/** Fixtures for the tests of the addresses KubeCell writes (issue 23). */

/** The finding of issue 23: an address that, spliced into `server:`, adds a proxy-url line. */
export const PROXY_INJECTION = '[::1]\u2028    proxy-url:\u2028      http://evil.example \u2028#';

/**
 * Values that are neither an IP address nor a DNS-1123 hostname, each one way a Node address or
 * a report can carry bytes into a status or a kubeconfig line.
 */
export const HOSTILE_ADDRESSES: readonly string[] = [
  PROXY_INJECTION,
  '10.0.0.9\u2029proxy-url: http://evil.example',
  '10.0.0.9\u0085',
  '10.0.0.9\r\n#',
  '10.0.0.9 ',
  'api.example #',
  '[fd00::9]',
  'fe80::1%eth0',
  'API.example',
  '1.2.3.999',
  `${'a'.repeat(250)}.example`,
];

/** A piece of any of HOSTILE_ADDRESSES: none may appear where KubeCell writes. */
export const HOSTILE_BYTES =
  /[\u2028\u2029\u0085\r\n]|evil\.example|api\.example #|%eth0|\[fd00|API\.example|1\.2\.3\.999|aaaaaaaa/;
