import { expect } from 'chai';
import { parse } from 'yaml';
import {
  canonicalKubeconfig,
  endpointUrl,
  kubeconfigServers,
  rewriteKubeconfigServer,
} from './kubeconfig.js';
import { expectPublishedKubeconfig, K3K_KUBECONFIG, MARKER } from './testing.js';

const URL = 'https://10.0.12.7:31234';

function rewritten(source: string, server = URL): string {
  const result = rewriteKubeconfigServer(source, server);
  if (!result.ok) throw new Error(result.problem);
  return result.text;
}

function refusal(source: string): string {
  const result = rewriteKubeconfigServer(source, URL);
  expect(result.ok, 'refused').to.equal(false);
  return result.ok ? '' : `${result.refusal}: ${result.problem}`;
}

describe('kubeconfig written by KubeCell', () => {
  it("holds k3k's values, the endpoint as server, quoted, in printable ASCII", () => {
    expectPublishedKubeconfig(rewritten(K3K_KUBECONFIG), URL);
  });

  it('drops comments and formatting, keeps every allowlisted value of every entry', () => {
    const source = [
      `# written by hand ${MARKER}`,
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '  - name: a   # first',
      '    cluster:',
      '      server: "https://10.43.0.1:443"',
      '      tls-server-name: k3k-team-a-service   # checked against the certificate',
      '  - name: b',
      '    cluster: {server: \'https://10.43.0.2:443\', certificate-authority-data: "QUJD"}',
      'users: [{name: a, user: {token: "abc.def"}}]',
      'contexts: [{name: a, context: {cluster: a, user: a, namespace: team-a}}]',
      'current-context: a',
      '',
    ].join('\n');
    const text = rewritten(source);
    expect(text).to.not.contain(MARKER);
    expectPublishedKubeconfig(text, URL, source);
    expect(kubeconfigServers(text)).to.deep.equal([URL, URL]);
  });

  it('reads a JSON kubeconfig too', () => {
    const source = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'default', cluster: { server: 'https://10.43.0.1:443' } }],
    });
    expect(parse(rewritten(source))).to.deep.equal({
      ...(JSON.parse(source) as object),
      clusters: [{ name: 'default', cluster: { server: URL } }],
      users: [],
      contexts: [],
      preferences: {},
    });
  });

  it('writes the same text from its own text (a kept Secret does not change)', () => {
    const text = rewritten(K3K_KUBECONFIG);
    expect(canonicalKubeconfig(text)).to.deep.equal({ ok: true, text });
    expect(rewritten(text)).to.equal(text);
    // A server edited into more than an endpoint URL is not kept.
    const proxied = text.replace(URL, 'https://10.0.12.7:31234/#');
    expect(canonicalKubeconfig(proxied)).to.deep.include({
      ok: false,
      problem:
        'clusters[0].cluster.server is not an https URL of an IP address or DNS name and a port',
    });
  });

  it('quotes values YAML 1.1 would read as booleans or numbers', () => {
    const source = K3K_KUBECONFIG.replace(/name: default/g, 'name: yes').replace(
      /(cluster|user): default/g,
      '$1: yes',
    );
    const text = rewritten(source.replace('current-context: default', 'current-context: "0777"'));
    expect(text).to.contain('name: "yes"');
    expect(text).to.contain('current-context: "0777"');
  });

  it('writes IPv6 endpoints in brackets', () => {
    expect(endpointUrl('fd00::7', 30001)).to.equal('https://[fd00::7]:30001');
    expect(endpointUrl('api.example.com', 30001)).to.equal('https://api.example.com:30001');
    const text = rewritten(K3K_KUBECONFIG, endpointUrl('fd00::7', 30001));
    expect(kubeconfigServers(text)).to.deep.equal(['https://[fd00::7]:30001']);
  });

  it('refuses an endpoint that is not https://<IP or DNS name>:<port>', () => {
    for (const server of [
      'http://10.0.12.7:31234',
      'https://10.0.12.7:31234/path',
      'https://10.0.12.7:31234 #',
      'https://[::1]\u2028    proxy-url:\u2028      http://evil.example:1',
      'https://user@10.0.12.7:31234',
      'https://10.0.12.7',
      'https://API.example:1',
      'https://1.2.3.999:1',
      'https://[:::::]:1',
      'https://[10.0.12.7]:1',
      'https://fd00::7:1',
      'https://10.0.12.7:0',
      'https://10.0.12.7:65536',
    ]) {
      const result = rewriteKubeconfigServer(K3K_KUBECONFIG, server);
      expect(result, server).to.deep.include({ ok: false, refusal: 'rejected' });
    }
  });

  it('refuses what it cannot read', () => {
    for (const [source, problem] of [
      ['clusters: [\n', 'not valid YAML'],
      ['apiVersion: v1\nkind: Config\n', 'no clusters list'],
      ['clusters: []\n', 'empty'],
      ['clusters:\n- name: a\n  cluster:\n    server: 443\n', 'no cluster.server string'],
      ['- a\n- b\n', 'no clusters list'],
    ] as const) {
      expect(refusal(source), source).to.contain(problem);
    }
  });

  it('refuses a line break or control character another YAML parser reads, naming its position', () => {
    const cases: [string, string][] = [
      ['\u2028', 'U+2028 (LINE SEPARATOR)'],
      ['\u2029', 'U+2029 (PARAGRAPH SEPARATOR)'],
      ['\u0085', 'U+0085 (NEXT LINE)'],
      ['\r', 'U+000D (CARRIAGE RETURN without LINE FEED)'],
      ['\u0000', 'U+0000'],
      ['\u001b', 'U+001B'],
      ['\u007f', 'U+007F'],
      ['\u009b', 'U+009B'],
    ];
    for (const [character, name] of cases) {
      const source = K3K_KUBECONFIG.replace(
        'current-context: default',
        `current-context: default${character}users:${character}- name: x`,
      );
      const line = K3K_KUBECONFIG.split('\n').indexOf('current-context: default') + 1;
      expect(refusal(source)).to.equal(
        `rejected: it holds ${name} at line ${line}, column 25, which kubectl's YAML parser reads differently (a kubeconfig holds no control character, U+0085, U+2028 or U+2029)`,
      );
    }
    // CRLF line ends and tabs in comments are ordinary.
    expectPublishedKubeconfig(rewritten(K3K_KUBECONFIG.replace(/\n/g, '\r\n')), URL);
    expectPublishedKubeconfig(rewritten(`#\tk3k\n${K3K_KUBECONFIG}`), URL);
  });
});
