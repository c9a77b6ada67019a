import { expect } from 'chai';
import { parse } from 'yaml';
import { endpointUrl, kubeconfigServers, rewriteKubeconfigServer } from './kubeconfig.js';
import { K3K_KUBECONFIG } from './testing.js';

const URL = 'https://10.0.12.7:31234';

function rewritten(source: string, server = URL): string {
  const result = rewriteKubeconfigServer(source, server);
  if (!result.ok) throw new Error(result.problem);
  return result.text;
}

describe('kubeconfig server rewrite', () => {
  it("changes only the server of k3k's kubeconfig, byte for byte", () => {
    const text = rewritten(K3K_KUBECONFIG);
    expect(text).to.equal(K3K_KUBECONFIG.replace('https://10.43.12.34:443', URL));
    const before = parse(K3K_KUBECONFIG) as { clusters: { cluster: { server: string } }[] };
    before.clusters[0]!.cluster.server = URL;
    expect(parse(text)).to.deep.equal(before);
  });

  it('keeps comments, odd indentation and the quoting style of the server', () => {
    const source = [
      '# written by hand',
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '  - name: a   # first',
      '    cluster:',
      '      server: "https://10.43.0.1:443"',
      '      tls-server-name: k3k-team-a-service   # checked against the certificate',
      '  - name: b',
      '    cluster: {server: \'https://10.43.0.2:443\', certificate-authority-data: "QUJD"}',
      'users: []',
      '',
    ].join('\n');
    const text = rewritten(source);
    expect(text).to.equal(
      source
        .replace('"https://10.43.0.1:443"', `"${URL}"`)
        .replace("'https://10.43.0.2:443'", `'${URL}'`),
    );
    expect(kubeconfigServers(text)).to.deep.equal([URL, URL]);
  });

  it('rewrites a JSON kubeconfig too', () => {
    const source = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'default', cluster: { server: 'https://10.43.0.1:443' } }],
    });
    expect(rewritten(source)).to.equal(source.replace('https://10.43.0.1:443', URL));
  });

  it('writes IPv6 endpoints in brackets', () => {
    expect(endpointUrl('fd00::7', 30001)).to.equal('https://[fd00::7]:30001');
    expect(endpointUrl('api.example.com', 30001)).to.equal('https://api.example.com:30001');
    const text = rewritten(K3K_KUBECONFIG, endpointUrl('fd00::7', 30001));
    expect(kubeconfigServers(text)).to.deep.equal(['https://[fd00::7]:30001']);
  });

  it('refuses what it cannot rewrite safely', () => {
    for (const [source, problem] of [
      ['clusters: [\n', 'not valid YAML'],
      ['apiVersion: v1\nkind: Config\n', 'no clusters list'],
      ['clusters: []\n', 'empty'],
      ['clusters:\n- name: a\n  cluster:\n    server: 443\n', 'no cluster.server string'],
      ['- a\n- b\n', 'no clusters list'],
    ] as const) {
      const result = rewriteKubeconfigServer(source, URL);
      expect(result.ok, source).to.equal(false);
      if (!result.ok) expect(result.problem).to.contain(problem);
    }
  });
});
