import { expect } from 'chai';
import { renderK3kKubeconfig } from '../../harness/simulate/k3k.js';
import {
  checkKubeconfig,
  kubeconfigMemoStats,
  kubeconfigServers,
  rewriteKubeconfigServer,
  type RewriteResult,
} from './kubeconfig.js';
import { MAX_KUBECONFIG_BYTES } from './kubeconfig-policy.js';
import { FORBIDDEN_KUBECONFIGS, K3K_KUBECONFIG, MARKER, withFields } from './testing.js';

const URL = 'https://10.0.12.7:31234';

function refused(source: string): Extract<RewriteResult, { ok: false }> {
  const result = rewriteKubeconfigServer(source, URL);
  expect(result.ok, 'refused').to.equal(false);
  if (result.ok) throw new Error('published');
  expect(result.problem, 'the problem quotes the kubeconfig').to.not.contain(MARKER);
  // The check of a published Secret agrees with the rewrite.
  const checked = checkKubeconfig(source);
  expect(checked).to.deep.include({ ok: false, refusal: result.refusal });
  expect(kubeconfigServers(source)).to.equal(undefined);
  return result;
}

describe('kubeconfig allowlist', () => {
  it("accepts k3k's kubeconfig (the fixture and the simulated k3k's) and JSON", () => {
    for (const source of [
      K3K_KUBECONFIG,
      renderK3kKubeconfig('https://k3k-team-a-service.tenant-a.svc:443'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'a', cluster: { server: 'https://10.43.0.1', 'tls-server-name': 'a' } }],
        users: [{ name: 'a', user: { token: 'abc' } }],
        contexts: [{ name: 'a', context: { cluster: 'a', user: 'a', namespace: 'default' } }],
        'current-context': 'a',
      }),
    ]) {
      expect(rewriteKubeconfigServer(source, URL).ok, source).to.equal(true);
      expect(checkKubeconfig(source).ok).to.equal(true);
    }
  });

  const forbidden: { what: string; source: string; path: string }[] = [
    ...FORBIDDEN_KUBECONFIGS,
    {
      what: 'skipping TLS verification',
      source: withFields('cluster', ['insecure-skip-tls-verify: true']),
      path: 'clusters[0].cluster.insecure-skip-tls-verify',
    },
    {
      what: 'basic auth',
      source: withFields('user', [`password: ${MARKER}`]),
      path: 'users[0].user.password',
    },
    {
      what: 'impersonation',
      source: withFields('user', [`as: ${MARKER}`]),
      path: 'users[0].user.as',
    },
    {
      what: 'extensions',
      source: withFields('top', ['extensions:', `- name: ${MARKER}`]),
      path: 'extensions',
    },
    {
      what: 'preferences',
      source: K3K_KUBECONFIG.replace('preferences: {}', 'preferences: {colors: true}'),
      path: 'preferences.colors',
    },
  ];
  for (const { what, source, path } of forbidden) {
    it(`refuses ${what}, naming ${path} and not its value`, () => {
      const result = refused(source);
      expect(result.refusal).to.equal('rejected');
      expect(result.problem).to.match(
        new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')} is not allowed`),
      );
    });
  }

  it('names a key that is not a kubeconfig field by its position only', () => {
    const result = refused(withFields('user', [`${MARKER}: x`]));
    expect(result.problem).to.match(/^users\[0\]\.user\.<key at line 20, column 5> is not allowed/);
  });

  it('refuses values that are not strings, duplicate keys, anchors, aliases, tags and merge keys', () => {
    const cases: [string, string][] = [
      [withFields('user', ['token: 12345']), 'users[0].user.token must be a string'],
      [withFields('user', ['token: {a: b}']), 'users[0].user.token must be a string'],
      [
        withFields('user', [`client-key-data: ${MARKER}`]),
        'users[0].user.client-key-data appears more than once',
      ],
      [
        K3K_KUBECONFIG.replace(
          'users:\n- name: default\n  user:',
          'users:\n- name: default\n  user: &u',
        ),
        'users[0].user has a YAML anchor',
      ],
      [
        K3K_KUBECONFIG.replace(
          '  name: default\ncontexts:',
          '  name: &n default\ncontexts:',
        ).replace('    cluster: default\n', '    cluster: *n\n'),
        'clusters[0].name has a YAML anchor; contexts[0].context.cluster is a YAML alias',
      ],
      [
        withFields('user', [`token: !!str ${MARKER}`]),
        'users[0].user.token has an explicit YAML tag',
      ],
      [
        withFields('user', ['<<: {exec: {command: sh}}']),
        'users[0].user.<key at line 20, column 5> is not allowed',
      ],
      [K3K_KUBECONFIG.replace('preferences: {}', 'preferences:'), 'preferences must be a map'],
      [K3K_KUBECONFIG.replace(/^users:\n[\s\S]*$/m, 'users: {}\n'), 'users must be a list'],
    ];
    for (const [source, problem] of cases) {
      const result = refused(source);
      expect(result.refusal, problem).to.equal('rejected');
      expect(result.problem, problem).to.contain(problem);
    }
  });

  it('lists at most three violations, then how many more', () => {
    const result = refused(
      withFields('user', ['exec: {}', 'auth-provider: {}', 'tokenFile: /x', 'client-key: /y']),
    );
    expect(result.problem).to.match(
      /^users\[0\]\.user\.exec is not allowed; users\[0\]\.user\.auth-provider is not allowed; users\[0\]\.user\.tokenFile is not allowed; and 1 more \(a published admin kubeconfig holds only /,
    );
  });

  it('reports a YAML error by kind and position, never the line (which may hold a key)', () => {
    const source = K3K_KUBECONFIG.replace(
      /^ {4}client-key-data: .*$/m,
      `   client-key-data: LS0t${MARKER}S0tCg==\n  x: [`,
    );
    const result = refused(source);
    expect(result.refusal).to.equal('invalid');
    expect(result.problem).to.match(/^not valid YAML \([A-Z_]+ at line \d+, column \d+\)$/);
  });

  it(`refuses a kubeconfig over ${MAX_KUBECONFIG_BYTES} bytes before parsing it`, () => {
    const padding = (bytes: number) => `# ${'p'.repeat(bytes - 3)}\n`;
    const atLimit = K3K_KUBECONFIG + padding(MAX_KUBECONFIG_BYTES - K3K_KUBECONFIG.length);
    expect(Buffer.byteLength(atLimit)).to.equal(MAX_KUBECONFIG_BYTES);
    expect(rewriteKubeconfigServer(atLimit, URL).ok).to.equal(true);

    // Written anew, a kubeconfig whose values fill the limit would be over it with a longer
    // server: refused, or the published Secret could not pass the check it is held to.
    const withCa = (groups: number) =>
      K3K_KUBECONFIG.replace(
        /certificate-authority-data: \S+/,
        `certificate-authority-data: ${'QUJD'.repeat(groups)}`,
      );
    const written = (groups: number) => {
      const result = rewriteKubeconfigServer(withCa(groups), URL);
      return result.ok ? Buffer.byteLength(result.text) : Infinity;
    };
    let groups = Math.floor((MAX_KUBECONFIG_BYTES - written(1)) / 4);
    while (written(groups) > MAX_KUBECONFIG_BYTES) groups -= 1;
    const longerServer = URL.replace('10.0.12.7', 'a-longer-name.example');
    const longer = rewriteKubeconfigServer(withCa(groups), longerServer);
    expect(longer).to.deep.include({ ok: false, refusal: 'rejected' });
    expect(longer.ok || longer.problem).to.match(
      /^with the endpoint as its server, it is 655\d\d bytes/,
    );

    const before = kubeconfigMemoStats();
    // One byte more, in a two-byte character: the limit is in UTF-8 bytes, not characters.
    const over = atLimit.replace('# p', '# é');
    const result = refused(`${over}`);
    expect(result).to.deep.include({ refusal: 'rejected' });
    expect(result.problem).to.equal(
      `it is ${MAX_KUBECONFIG_BYTES + 1} bytes, more than the ${MAX_KUBECONFIG_BYTES} (64 KiB) a kubeconfig may have`,
    );
    const after = kubeconfigMemoStats();
    // Never parsed, never remembered, never even hashed.
    expect(after.rewrite.misses).to.equal(before.rewrite.misses);
    expect(after.rewrite.skipped).to.equal(before.rewrite.skipped);
    expect(after.check.misses).to.equal(before.check.misses);
  });
});
