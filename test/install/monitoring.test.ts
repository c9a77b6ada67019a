// Metrics and their monitoring: docs/metrics.md lists every metric the hook server exports, with
// its type and labels, and the values of the `controller` and `hook` labels are the controllers
// the hook server registers (hooks/controllers/register.ts) and the hook names; the optional component manifests/monitoring/ (a ServiceMonitor and a
// PrometheusRule for the Prometheus Operator, whose CRDs the test cluster does not have) is
// checked structurally: the ServiceMonitor reaches the Service's metrics port, and every alert
// is well formed, uses only metrics the hook server exports and is documented. Unit test: no
// cluster.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { createAdmissionMetrics } from '../../hooks/admission/metrics.js';
import { CONTROLLERS } from '../../hooks/controllers/register.js';
import { createLoadShedder } from '../../hooks/server/load-shedding.js';
import { createMetrics } from '../../hooks/server/metrics.js';
import { HOOK_NAMES } from '../../hooks/server/registry.js';
import { backticked, column, readRepoFile, section, tables } from './markdown.js';
import {
  findObject,
  kustomizationEntries,
  kustomizationObjects,
  runtimeSources,
} from './support.js';
import type { Json } from './support.js';
import { ingressAllowed, podsOf, type PodRef } from './network-policy.js';

const DOC = 'docs/metrics.md';
const COMPONENT = 'manifests/monitoring';

/** Every `kubecell_*` metric name the hook server's sources spell out (tests excluded). */
function exportedNames(): Set<string> {
  const names = new Set<string>();
  for (const file of runtimeSources('hooks')) {
    for (const match of readRepoFile(file).matchAll(/['"`](kubecell_[a-z0-9_]+)['"`]/g)) {
      names.add(match[1] as string);
    }
  }
  return names;
}

interface Registered {
  name: string;
  type: string;
  labels: string[];
}

/** The metrics of a registry as the hook server builds it: hooks, load shedding, admission. */
async function registered(): Promise<Registered[]> {
  const metrics = createMetrics({ processMetrics: true });
  createLoadShedder({ maxInflight: 1, retryAfterSeconds: 1, registry: metrics.registry });
  createAdmissionMetrics(metrics.registry);
  return metricsOf(metrics.registry);
}

async function metricsOf(registry: Registry): Promise<Registered[]> {
  const json = await registry.getMetricsAsJSON();
  return json.map((metric) => {
    const object = registry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] };
    return { name: metric.name, type: String(metric.type), labels: [...(object.labelNames ?? [])] };
  });
}

/** The rows of the metrics table: name → {type, labels}. */
function documentedMetrics(): Map<string, { type: string; labels: string[] }> {
  const text = section(readRepoFile(DOC), 2, "KubeCell's metrics");
  if (text === undefined) throw new Error(`${DOC} has no "## KubeCell's metrics"`);
  const [table] = tables(text);
  if (table === undefined) throw new Error(`${DOC}: no table of metrics`);
  const [name, type, labels] = [/^metric$/i, /^type$/i, /^labels$/i].map((title) =>
    column(table, title),
  ) as [number, number, number];
  return new Map(
    table.rows.map((row) => [
      backticked(row[name] ?? '')[0] ?? '',
      { type: (row[type] ?? '').trim(), labels: backticked(row[labels] ?? '') },
    ]),
  );
}

/**
 * The values docs/metrics.md gives for a label: the bullet `- \`<label>\`: ...` under the table,
 * its code spans that look like label values (paths and the label's own name left out).
 */
function documentedLabelValues(label: string): string[] {
  const text = section(readRepoFile(DOC), 2, "KubeCell's metrics") ?? '';
  const bullet = text.split(/\n(?=- )/).find((entry) => entry.startsWith(`- \`${label}\`:`));
  if (bullet === undefined) throw new Error(`${DOC}: no bullet "- \`${label}\`:"`);
  return backticked(bullet)
    .slice(1)
    .filter((value) => /^[a-z][a-z0-9-]*$/.test(value));
}

/** A PromQL expression's metric names (identifiers not followed by `(`, keywords aside). */
function metricsIn(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const withoutLabels = withoutStrings.replace(/\{[^}]*\}/g, '{}');
  const withoutGrouping = withoutLabels.replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '');
  const keywords = new Set(['by', 'without', 'on', 'ignoring', 'bool', 'and', 'or', 'unless']);
  return [...withoutGrouping.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((match) => match[1] as string)
    .filter((name) => !keywords.has(name) && !/^\d/.test(name))
    .filter((name) => !/^\d+[smhdwy]$/.test(name));
}

/** Brackets balance and quotes close. */
function balanced(expr: string): boolean {
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const stack: string[] = [];
  const text = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  if ((text.match(/"/g) ?? []).length % 2 !== 0) return false;
  for (const char of text) {
    if ('([{'.includes(char)) stack.push(char);
    else if (char in pairs && stack.pop() !== pairs[char]) return false;
  }
  return stack.length === 0;
}

describe('metrics and monitoring', () => {
  describe(DOC, () => {
    it('lists every kubecell_* metric the code exports, and only those', () => {
      const code = exportedNames();
      expect(code.size).to.be.greaterThan(5);
      const documented = new Set(documentedMetrics().keys());
      expect([...code].filter((name) => !documented.has(name)).sort()).to.deep.equal([]);
      expect([...documented].filter((name) => !code.has(name)).sort()).to.deep.equal([]);
    });

    it('gives the type and the labels of each metric the hook server registers', async () => {
      const documented = documentedMetrics();
      const wrong: string[] = [];
      for (const metric of (await registered()).filter((m) => m.name.startsWith('kubecell_'))) {
        const row = documented.get(metric.name);
        if (row === undefined) {
          wrong.push(`${metric.name}: not documented`);
          continue;
        }
        if (row.type !== metric.type)
          wrong.push(`${metric.name}: ${metric.type}, documented ${row.type}`);
        if ([...row.labels].sort().join() !== [...metric.labels].sort().join()) {
          wrong.push(`${metric.name}: labels ${metric.labels}, documented ${row.labels}`);
        }
      }
      expect(wrong).to.deep.equal([]);
    });

    it('gives every value of the controller label: the controllers the hook server registers', () => {
      // A call to a controller the server does not know is counted as `unknown` (app.ts), which
      // the doc says in the sentence above the list.
      expect([...documentedLabelValues('controller')].sort()).to.deep.equal(
        CONTROLLERS.map((controller) => controller.name).sort(),
      );
      expect(section(readRepoFile(DOC), 2, "KubeCell's metrics")).to.include('`unknown`');
    });

    it('gives every value of the hook label: the hooks Metacontroller calls', () => {
      expect([...documentedLabelValues('hook')].sort()).to.deep.equal([...HOOK_NAMES].sort());
    });

    it('names the prefixes of the default process metrics', async () => {
      const text = readRepoFile(DOC);
      const prefixes = new Set(
        (await registered())
          .filter((metric) => !metric.name.startsWith('kubecell_'))
          .map((metric) => `${metric.name.split('_')[0] as string}_`),
      );
      expect([...prefixes].sort()).to.deep.equal(['nodejs_', 'process_']);
      for (const prefix of prefixes) expect(text).to.include(`\`${prefix}*\``);
    });
  });

  describe(`${COMPONENT}/ (optional: needs the Prometheus Operator's CRDs)`, () => {
    const objects = kustomizationObjects(COMPONENT);
    const service = findObject(kustomizationObjects('manifests'), 'Service', 'kubecell-hooks');
    const rule = findObject(objects, 'PrometheusRule', 'kubecell');
    const alerts = ((rule.spec as Json).groups as Json[]).flatMap((group) => group.rules as Json[]);

    it('is a Kustomization of a ServiceMonitor, a PrometheusRule and a NetworkPolicy in kubecell-system', () => {
      expect(kustomizationEntries(COMPONENT)).to.deep.equal([
        'servicemonitor.yaml',
        'prometheusrule.yaml',
        'networkpolicy.yaml',
      ]);
      expect(
        objects.map((object) => `${String(object.apiVersion)} ${String(object.kind)}`),
      ).to.deep.equal([
        'monitoring.coreos.com/v1 ServiceMonitor',
        'monitoring.coreos.com/v1 PrometheusRule',
        'networking.k8s.io/v1 NetworkPolicy',
      ]);
      for (const object of objects) {
        expect((object.metadata as Json).namespace).to.equal('kubecell-system');
      }
    });

    it('the ServiceMonitor scrapes /metrics on the Service kubecell-hooks, port http', () => {
      const monitor = findObject(objects, 'ServiceMonitor', 'kubecell-hooks');
      const spec = monitor.spec as Json;
      const labels = (service.metadata as Json).labels as Record<string, string>;
      const matchLabels = (spec.selector as Json).matchLabels as Record<string, string>;
      for (const [key, value] of Object.entries(matchLabels))
        expect(labels[key], key).to.equal(value);
      const ports = ((service.spec as Json).ports as Json[]).map((port) => port.name);
      for (const endpoint of spec.endpoints as Json[]) {
        expect(ports).to.include(endpoint.port);
        expect(endpoint.port).to.equal('http');
        expect(endpoint.path).to.equal('/metrics');
      }
    });

    describe('the NetworkPolicies let Prometheus scrape the hook server', () => {
      const base = kustomizationObjects('manifests');
      const hookServer = podsOf(findObject(base, 'Deployment', 'kubecell-hooks'));
      // Where the ServiceMonitor's endpoint goes: the Service's port http, then its targetPort.
      const servicePort = ((service.spec as Json).ports as Json[]).find(
        (port) => port.name === 'http',
      ) as Json;
      const scrapePort =
        typeof servicePort.targetPort === 'number'
          ? servicePort.targetPort
          : (hookServer.ports.find((port) => port.name === servicePort.targetPort)
              ?.containerPort as number);
      // A Prometheus as kube-prometheus runs it: namespace monitoring, Pods labelled by the
      // Prometheus Operator (app.kubernetes.io/name=prometheus, prometheus=<its name>).
      const prometheus: PodRef = {
        namespace: 'monitoring',
        labels: { 'app.kubernetes.io/name': 'prometheus', prometheus: 'k8s' },
      };
      const policiesOf = (objects: Json[]): Json[] =>
        objects.filter((object) => object.kind === 'NetworkPolicy');

      it('with manifests/monitoring/, Prometheus reaches the metrics port', () => {
        expect(scrapePort).to.be.a('number');
        const policies = policiesOf([...base, ...objects]);
        expect(ingressAllowed(policies, prometheus, hookServer, scrapePort)).to.equal(true);
      });

      it('without it, the NetworkPolicy kubecell-hooks of manifests/ refuses the scrape', () => {
        expect(policiesOf(base), 'manifests/ restricts the hook server').to.not.deep.equal([]);
        expect(ingressAllowed(policiesOf(base), prometheus, hookServer, scrapePort)).to.equal(
          false,
        );
      });

      it('the rule admits only Prometheus Pods, and nothing new to the webhook port', () => {
        const policies = policiesOf([...base, ...objects]);
        const tenant: PodRef = { namespace: 'tenant-a', labels: prometheus.labels };
        const other: PodRef = { namespace: 'monitoring', labels: { app: 'grafana' } };
        expect(
          ingressAllowed(policies, tenant, hookServer, scrapePort),
          'other namespace',
        ).to.equal(false);
        expect(ingressAllowed(policies, other, hookServer, scrapePort), 'other Pod').to.equal(
          false,
        );
        const rule = findObject(objects, 'NetworkPolicy', 'kubecell-hooks-metrics');
        const ports = ((rule.spec as Json).ingress as Json[]).flatMap((entry) => entry.ports);
        expect(ports).to.deep.equal([{ protocol: 'TCP', port: 'http' }]);
      });
    });

    it('every rule is a well-formed alert', () => {
      expect(alerts.length).to.be.greaterThan(3);
      const groups = (rule.spec as Json).groups as Json[];
      expect(new Set(groups.map((group) => group.name)).size).to.equal(groups.length);
      const names = alerts.map((alert) => alert.alert);
      expect(new Set(names).size, 'alert names are unique').to.equal(names.length);
      for (const alert of alerts) {
        const name = String(alert.alert);
        expect(name, 'alert name').to.match(/^KubeCell[A-Z][A-Za-z0-9]+$/);
        expect(Object.keys(alert).sort(), name).to.deep.equal([
          'alert',
          'annotations',
          'expr',
          'for',
          'labels',
        ]);
        expect(alert.expr, name).to.be.a('string');
        expect(balanced(String(alert.expr)), `${name}: brackets and quotes`).to.equal(true);
        expect(alert.for, name).to.match(/^\d+[smh]$/);
        expect((alert.labels as Json).severity, name).to.be.oneOf(['critical', 'warning', 'info']);
        const annotations = alert.annotations as Json;
        expect(annotations.summary, name).to.be.a('string');
        expect(annotations.description, name).to.be.a('string');
      }
    });

    it('every alert uses only metrics the hook server exports (or Prometheus up)', async () => {
      const known = new Set([
        ...(await registered()).map((metric) => metric.name),
        ...exportedNames(),
      ]);
      const histograms = new Set(
        (await registered()).filter((m) => m.type === 'histogram').map((m) => m.name),
      );
      const unknown: string[] = [];
      for (const alert of alerts) {
        for (const metric of metricsIn(String(alert.expr))) {
          const base = metric.replace(/_(bucket|sum|count)$/, '');
          const ok =
            metric === 'up' ||
            (known.has(metric) && !histograms.has(metric)) ||
            (metric !== base && histograms.has(base));
          if (!ok) unknown.push(`${String(alert.alert)}: ${metric}`);
        }
      }
      expect(unknown).to.deep.equal([]);
      // The parser sees the metrics (it would pass vacuously otherwise).
      expect(
        metricsIn('sum by (le) (rate(kubecell_hook_duration_seconds_bucket{code!~"2.."}[5m])) > 1'),
      ).to.deep.equal(['kubecell_hook_duration_seconds_bucket']);
    });

    it(`every alert is documented in ${DOC}`, () => {
      const text = section(readRepoFile(DOC), 2, 'Example alerts') ?? '';
      const missing = alerts
        .map((alert) => String(alert.alert))
        .filter((name) => !text.includes(`\`${name}\``));
      expect(missing).to.deep.equal([]);
    });
  });
});
