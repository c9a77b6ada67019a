// Checks the JSON Schemas in schemas/ on their own, without the generator:
// they compile with ajv (draft-07), follow the conventions the generator and
// the apiserver rely on, document every field, and accept every sample in
// samples/ (JSON Schema and the x-kubernetes-validations CEL rules alike).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parseAllDocuments } from 'yaml';
import { parse as celParse } from '@bufbuild/cel';
import { evaluateRules, type RuleSchema } from '../hooks/validation/cel-rules.js';

// ajv-formats is CommonJS: under NodeNext its default import is module.exports.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
interface CelRule {
  rule: string;
  message: string;
  fieldPath?: string;
  reason?: string;
  messageExpression?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const schemasDir = here;
const samplesDir = join(here, '..', 'samples');
const COMMON = 'common.schema.json';
const KUBERNETES_KEYWORDS = [
  'x-kubernetes-validations',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubecell-crd',
];
const CEL_REASONS = [
  'FieldValueInvalid',
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueDuplicate',
];

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function clone<T>(v: T): T {
  return structuredClone(v);
}

const schemaFiles = readdirSync(schemasDir)
  .filter((f) => f.endsWith('.schema.json'))
  .sort();
const schemas = new Map<string, JsonObject>(
  schemaFiles.map((f) => [f, JSON.parse(readFileSync(join(schemasDir, f), 'utf8')) as JsonObject]),
);
const common = schemas.get(COMMON) as JsonObject;
const definitions = (common?.definitions ?? {}) as Record<string, JsonObject>;
const kindFiles = schemaFiles.filter((f) => f !== COMMON);
/** kind name (e.g. "Cell") -> schema file */
const kindToFile = new Map<string, string>(
  kindFiles.map((f) => [String((schemas.get(f) as JsonObject).title), f]),
);

function newAjv(useDefaults: boolean): Ajv {
  const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: true, useDefaults });
  addFormats(ajv);
  for (const keyword of KUBERNETES_KEYWORDS) ajv.addKeyword({ keyword });
  for (const [, schema] of schemas) ajv.addSchema(schema);
  return ajv;
}

/** The definition a "common.schema.json#/definitions/x" reference points to. */
function deref(ref: string): JsonObject {
  const m = /^common\.schema\.json#\/definitions\/([A-Za-z0-9]+)$/.exec(ref);
  if (!m) throw new Error(`unsupported $ref ${ref}`);
  const def = definitions[m[1] as string];
  if (!def) throw new Error(`dangling $ref ${ref}`);
  return def;
}
/** A schema node with its $ref resolved (a sibling description wins, as in the generator). */
function resolve(node: JsonObject): JsonObject {
  if (typeof node.$ref !== 'string') return node;
  const target = resolve(deref(node.$ref));
  return node.description === undefined ? target : { ...target, description: node.description };
}

/** Every schema node with a JSON-ish path, without following $refs. */
function* walk(node: JsonObject, path: string): Generator<[JsonObject, string]> {
  yield [node, path];
  if (isObject(node.properties)) {
    for (const [k, v] of Object.entries(node.properties))
      yield* walk(v as JsonObject, `${path}.${k}`);
  }
  if (isObject(node.items)) yield* walk(node.items, `${path}[]`);
  if (isObject(node.additionalProperties)) yield* walk(node.additionalProperties, `${path}{*}`);
  if (isObject(node.definitions)) {
    for (const [k, v] of Object.entries(node.definitions))
      yield* walk(v as JsonObject, `${path}#/definitions/${k}`);
  }
  for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
    const list = node[key];
    if (Array.isArray(list)) {
      for (const [i, v] of list.entries()) yield* walk(v as JsonObject, `${path}/${key}[${i}]`);
    }
  }
}
/** Every node that is a property (has a name in kubectl explain), with its path. */
function* walkProperties(node: JsonObject, path: string): Generator<[JsonObject, string]> {
  for (const [n, p] of walk(node, path)) {
    if (isObject(n.properties)) {
      for (const [k, v] of Object.entries(n.properties)) yield [v as JsonObject, `${p}.${k}`];
    }
  }
}
function allNodes(): [JsonObject, string][] {
  const out: [JsonObject, string][] = [];
  for (const [file, schema] of schemas) out.push(...walk(schema, file));
  return out;
}

// ---------- CEL evaluation: the product's evaluator, on the generated schemas the CRDs carry ----------

const generatedSchemas = new Map<string, RuleSchema>(
  kindFiles.map((file) => [
    file,
    JSON.parse(
      readFileSync(
        join(here, '..', 'hooks', 'generated', 'schemas', file.replace('.schema.json', '.json')),
        'utf8',
      ),
    ) as RuleSchema,
  ]),
);
/** Every rule some test saw reject an object; checked against the rules the CRDs carry. */
const rulesSeenRejecting = new Set<string>();
function evaluateCel(file: string, value: JsonObject, old?: JsonObject) {
  const violations = evaluateRules(generatedSchemas.get(file) as RuleSchema, value, old);
  for (const violation of violations) rulesSeenRejecting.add(violation.rule);
  return violations;
}
function* rulesOf(node: unknown): Generator<string> {
  if (Array.isArray(node)) for (const item of node) yield* rulesOf(item);
  else if (isObject(node)) {
    for (const rule of (node['x-kubernetes-validations'] ?? []) as { rule: string }[])
      yield rule.rule;
    for (const value of Object.values(node)) yield* rulesOf(value);
  }
}

// ---------- samples ----------

interface Sample {
  file: string;
  doc: JsonObject;
}
const sampleFiles = readdirSync(samplesDir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const samples: Sample[] = sampleFiles.flatMap((file) =>
  parseAllDocuments(readFileSync(join(samplesDir, file), 'utf8')).map((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]?.message}`);
    return { file, doc: d.toJS() as JsonObject };
  }),
);
const kubecellSamples = samples.filter((s) => s.doc.apiVersion === 'kubecell.io/v1alpha1');

function sampleOf(file: string): JsonObject {
  const s = samples.find((x) => x.file === file);
  if (!s) throw new Error(`missing sample ${file}`);
  return clone(s.doc);
}

describe('schemas', () => {
  const ajv = newAjv(false);
  const ajvDefaults = newAjv(true);
  const validators = new Map<string, ValidateFunction>();
  const defaulters = new Map<string, ValidateFunction>();

  it('has common.schema.json and one schema per kind', () => {
    expect(schemas.has(COMMON)).to.equal(true);
    expect([...kindToFile.keys()].sort()).to.deep.equal([
      'Cell',
      'GPUCellPool',
      'VirtualCluster',
      'VirtualClusterPlan',
      'VirtualNodeClass',
    ]);
  });

  it('compiles every schema with ajv (draft-07, strict, x- keywords registered)', () => {
    for (const [file, schema] of schemas) {
      expect(schema.$schema, file).to.equal('http://json-schema.org/draft-07/schema#');
      expect(schema.$id, file).to.equal(file);
      if (file === COMMON) continue;
      validators.set(file, ajv.getSchema(file) as ValidateFunction);
      defaulters.set(file, ajvDefaults.getSchema(file) as ValidateFunction);
      expect(validators.get(file), file).to.be.a('function');
    }
  });

  it('documents every property at every depth', () => {
    const missing: string[] = [];
    for (const [file, schema] of schemas) {
      for (const [node, path] of walkProperties(schema, file)) {
        const described = resolve(node).description;
        if (typeof described !== 'string' || described.trim().length < 10) missing.push(path);
      }
      // Inline list items and map values become types of their own: document them too.
      for (const [node, path] of walk(schema, file)) {
        if ((path.endsWith('[]') || path.endsWith('{*}')) && node.$ref === undefined) {
          if (node.type === 'object' && typeof node.description !== 'string') missing.push(path);
        }
      }
    }
    expect(missing, `properties without a description:\n${missing.join('\n')}`).to.deep.equal([]);
  });

  it('gives every kind and every definition a title and a description', () => {
    const problems: string[] = [];
    for (const file of kindFiles) {
      const s = schemas.get(file) as JsonObject;
      if (typeof s.title !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(s.title))
        problems.push(`${file}: title`);
      if (typeof s.description !== 'string') problems.push(`${file}: description`);
      if (s.type !== 'object') problems.push(`${file}: type`);
      expect(s.required, file).to.deep.equal(['spec']);
      expect(Object.keys(s.properties as JsonObject).sort(), file).to.deep.equal([
        'spec',
        'status',
      ]);
    }
    for (const [name, def] of Object.entries(definitions)) {
      if (typeof def.title !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(def.title))
        problems.push(`definitions/${name}: PascalCase title`);
      if (typeof def.description !== 'string') problems.push(`definitions/${name}: description`);
    }
    expect(problems).to.deep.equal([]);
  });

  it('follows the structural-schema conventions the generator relies on', () => {
    const problems: string[] = [];
    for (const [node, path] of allNodes()) {
      if (path === COMMON) continue; // the definitions container
      if (typeof node.$ref === 'string') {
        const extra = Object.keys(node).filter((k) => k !== '$ref' && k !== 'description');
        if (extra.length > 0) problems.push(`${path}: $ref with siblings ${extra.join(', ')}`);
        try {
          deref(node.$ref);
        } catch (e) {
          problems.push(`${path}: ${(e as Error).message}`);
        }
        continue;
      }
      if (/\/anyOf\[\d+\]$/.test(path)) continue; // int-or-string branches
      const intOrString = node['x-kubernetes-int-or-string'] === true;
      if (!intOrString && typeof node.type !== 'string') problems.push(`${path}: no type`);
      const isKindRoot = path === COMMON || kindFiles.includes(path); // apiVersion/kind/metadata are injected
      if (
        !isKindRoot &&
        node.type === 'object' &&
        isObject(node.properties) &&
        node.additionalProperties !== false
      )
        problems.push(`${path}: object with properties lacks additionalProperties: false`);
      if (
        node.type === 'object' &&
        isObject(node.additionalProperties) &&
        node.maxProperties === undefined
      )
        problems.push(`${path}: map without maxProperties`);
      if (node.type === 'array') {
        if (typeof node.maxItems !== 'number') problems.push(`${path}: array without maxItems`);
        const items = isObject(node.items) ? resolve(node.items) : undefined;
        if (!items) problems.push(`${path}: array without items`);
        else if (items.type === 'string' && typeof items.maxLength !== 'number')
          problems.push(`${path}: string items without maxLength`);
        if (node['x-kubernetes-list-type'] === 'map') {
          const keys = node['x-kubernetes-list-map-keys'] as string[] | undefined;
          const required = (items?.required ?? []) as string[];
          if (!keys || keys.some((k) => !required.includes(k)))
            problems.push(`${path}: list-map keys must be required item fields`);
        }
      }
      if (Array.isArray(node.required) && isObject(node.properties)) {
        for (const r of node.required as string[])
          if (!(r in node.properties)) problems.push(`${path}: required ${r} is not a property`);
      }
      const rules = node['x-kubernetes-validations'];
      if (rules !== undefined) {
        if (!Array.isArray(rules)) problems.push(`${path}: x-kubernetes-validations is not a list`);
        for (const r of (rules ?? []) as unknown as CelRule[]) {
          if (typeof r.rule !== 'string' || typeof r.message !== 'string')
            problems.push(`${path}: CEL rule needs rule and message`);
          if (r.reason !== undefined && !CEL_REASONS.includes(r.reason))
            problems.push(`${path}: CEL reason ${r.reason}`);
          try {
            celParse(r.rule);
          } catch (e) {
            problems.push(`${path}: CEL rule does not parse: ${(e as Error).message}`);
          }
          if (r.fieldPath !== undefined) {
            let target: JsonObject | undefined = node;
            for (const seg of r.fieldPath.split('.').slice(1)) {
              const props: Json | undefined = target ? resolve(target).properties : undefined;
              target =
                isObject(props) && isObject(props[seg]) ? (props[seg] as JsonObject) : undefined;
            }
            if (!target) problems.push(`${path}: fieldPath ${r.fieldPath} is not in the schema`);
          }
        }
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('declares CRD metadata and printer columns that point at real fields', () => {
    const shortNames: Record<string, string> = {
      Cell: 'cell',
      VirtualNodeClass: 'vnclass',
      VirtualClusterPlan: 'vcp',
      VirtualCluster: 'vc',
      GPUCellPool: 'gcpool',
    };
    const scopes: Record<string, string> = {
      Cell: 'Namespaced',
      VirtualNodeClass: 'Cluster',
      VirtualClusterPlan: 'Namespaced',
      VirtualCluster: 'Namespaced',
      GPUCellPool: 'Cluster',
    };
    for (const [kind, file] of kindToFile) {
      const schema = schemas.get(file) as JsonObject;
      const crd = schema['x-kubecell-crd'] as JsonObject;
      expect(crd, file).to.be.an('object');
      expect(crd.kind).to.equal(kind);
      expect(crd.singular).to.equal(kind.toLowerCase());
      expect(crd.plural).to.equal(`${kind.toLowerCase()}${kind.endsWith('s') ? 'es' : 's'}`);
      expect(crd.listKind).to.equal(`${kind}List`);
      expect(crd.scope).to.equal(scopes[kind]);
      expect(crd.shortNames).to.deep.equal([shortNames[kind]]);
      expect(crd.categories).to.deep.equal(['kubecell']);
      const columns = crd.printerColumns as JsonObject[];
      expect(columns.map((c) => c.name)).to.include('Age');
      for (const c of columns) {
        expect(c.name, `${file} column`).to.be.a('string');
        expect(c.description, `${file} column ${c.name}`).to.be.a('string');
        expect(['string', 'integer', 'number', 'boolean', 'date']).to.include(c.type);
        const jsonPath = String(c.jsonPath);
        if (jsonPath === '.metadata.creationTimestamp') {
          expect(c.type).to.equal('date');
          continue;
        }
        // Resolve the path in the schema (a [?()] filter selects list items).
        let node: JsonObject | undefined = schema;
        for (const seg of jsonPath
          .replace(/\[\?\(.*?\)\]/g, '[]')
          .split('.')
          .slice(1)) {
          const [name, isList] = seg.endsWith('[]') ? [seg.slice(0, -2), true] : [seg, false];
          const props: Json | undefined = node ? resolve(node).properties : undefined;
          node =
            isObject(props) && isObject(props[name])
              ? resolve(props[name] as JsonObject)
              : undefined;
          if (node && isList) node = isObject(node.items) ? resolve(node.items) : undefined;
        }
        expect(node, `${file}: printer column ${c.name} ${jsonPath}`).to.be.an('object');
        const expected = c.type === 'date' ? 'string' : c.type;
        expect(node?.type, `${file}: printer column ${c.name} type`).to.equal(expected);
      }
    }
  });

  describe('samples', () => {
    it('has a full and a minimal sample of every kind, plus the host namespaces', () => {
      for (const kind of kindToFile.keys()) {
        for (const variant of ['full', 'minimal']) {
          const wanted = `${kind.toLowerCase()}-${variant}.yaml`;
          // Named <order>-<kind>-<variant>.yaml: the prefix orders a directory apply.
          const file = sampleFiles.find((f) => f.replace(/^\d\d-/, '') === wanted);
          expect(file, wanted).to.be.a('string');
          expect(sampleOf(file as string).kind, wanted).to.equal(kind);
        }
      }
      const namespaces = samples.filter((s) => s.file === '00-host-namespace.yaml');
      expect(namespaces.length).to.be.greaterThan(0);
      for (const { doc } of namespaces) {
        expect(doc.kind).to.equal('Namespace');
        expect((doc.metadata as JsonObject).labels).to.deep.include({
          'kubecell.io/host-namespace': 'true',
        });
      }
    });

    it('every sample is a known kind with spec only, in the right namespace', () => {
      const hostNamespaces = samples
        .filter((s) => s.doc.kind === 'Namespace')
        .map((s) => (s.doc.metadata as JsonObject).name);
      const hosted = new Map<string, string>();
      // Objects a KubeCell sample needs beside it: host namespaces, a pool's join Secret, the
      // Multus network a pool names, the DRA claims a pool's cells take their GPU from, and the
      // Cluster API templates a Cluster API pool clones.
      const supporting = new Map([
        ['Namespace', 'v1'],
        ['Secret', 'v1'],
        ['NetworkAttachmentDefinition', 'k8s.cni.cncf.io/v1'],
        ['ResourceClaimTemplate', 'resource.k8s.io/v1'],
        ['ResourceClaim', 'resource.k8s.io/v1'],
        ['KubeadmConfigTemplate', 'bootstrap.cluster.x-k8s.io/v1beta2'],
        ['KubevirtMachineTemplate', 'infrastructure.cluster.x-k8s.io/v1alpha1'],
      ]);
      for (const { file, doc } of samples) {
        if (supporting.has(String(doc.kind))) {
          expect(doc.apiVersion, file).to.equal(supporting.get(String(doc.kind)));
          continue;
        }
        expect(doc.apiVersion, file).to.equal('kubecell.io/v1alpha1');
        expect(kindToFile.has(String(doc.kind)), `${file}: kind ${doc.kind}`).to.equal(true);
        const unprefixed = file.replace(/^\d\d-/, '');
        expect(unprefixed.startsWith(`${String(doc.kind).toLowerCase()}-`), file).to.equal(true);
        expect(doc, file).not.to.have.property('status');
        const meta = doc.metadata as JsonObject;
        const scope = (
          schemas.get(kindToFile.get(String(doc.kind)) as string)?.['x-kubecell-crd'] as JsonObject
        ).scope;
        if (scope === 'Cluster') expect(meta, file).not.to.have.property('namespace');
        if (doc.kind === 'Cell') expect(meta.namespace, file).to.equal('kubecell-system');
        if (doc.kind === 'VirtualCluster' || doc.kind === 'VirtualClusterPlan') {
          expect(hostNamespaces, `${file}: namespace ${meta.namespace}`).to.include(meta.namespace);
        }
        if (doc.kind === 'VirtualCluster') {
          const ns = String(meta.namespace);
          expect(hosted.has(ns), `${file}: ${ns} already hosts ${hosted.get(ns)}`).to.equal(false);
          hosted.set(ns, file);
        }
      }
    });

    for (const { file, doc } of kubecellSamples) {
      it(`${file} (${String(doc.kind)} ${String((doc.metadata as JsonObject)?.name)}) is valid`, () => {
        const schemaFile = kindToFile.get(String(doc.kind)) as string;
        const validate = ajv.getSchema(schemaFile) as ValidateFunction;
        const ok = validate(doc);
        expect(ok, ajv.errorsText(validate.errors, { dataVar: file })).to.equal(true);
        // The CEL rules (evaluated after defaulting), on create and on a no-op update.
        expect(evaluateCel(schemaFile, doc)).to.deep.equal([]);
        expect(evaluateCel(schemaFile, doc, doc)).to.deep.equal([]);
      });
    }
  });

  describe('CEL rules reject what they must', () => {
    /** Validates with ajv and CEL (on create, or on update from `old`) and returns the error texts. */
    function errorsOf(obj: JsonObject, old?: JsonObject): string[] {
      const file = kindToFile.get(String(obj.kind)) as string;
      const validate = ajvDefaults.getSchema(file) as ValidateFunction;
      const current = clone(obj);
      const errors: string[] = [];
      if (!validate(current)) errors.push(ajv.errorsText(validate.errors));
      const previous = old ? clone(old) : undefined;
      if (previous) validate(previous);
      errors.push(...evaluateCel(file, obj, old).map((violation) => violation.message));
      return errors;
    }
    function expectRejected(obj: JsonObject, pattern: RegExp, old?: JsonObject) {
      const errors = errorsOf(obj, old);
      expect(errors.join('\n'), 'expected a rejection').to.match(pattern);
    }
    const pool = () => sampleOf('35-gpucellpool-full.yaml');
    const spec = (o: JsonObject) => o.spec as JsonObject;

    it('VirtualCluster: cellRef and classRef are immutable, other updates pass', () => {
      const vc = sampleOf('51-virtualcluster-full.yaml');
      const moved = clone(vc);
      (spec(moved).cellRef as JsonObject).name = 'cell2';
      expectRejected(moved, /spec\.cellRef is immutable/, vc);
      const reclassed = clone(vc);
      (spec(reclassed).classRef as JsonObject).name = 'cpu-small';
      expectRejected(reclassed, /spec\.classRef is immutable/, vc);
      expect(errorsOf(moved)).to.deep.equal([]); // creation is not a transition
      const plan = sampleOf('41-virtualclusterplan-full.yaml');
      const edited = clone(plan);
      (spec(edited).cellRef as JsonObject).name = 'cell2';
      expect(errorsOf(edited, plan)).to.deep.equal([]); // plans may be edited
    });

    it('VirtualCluster: status.resolved cannot change once written', () => {
      const vc = sampleOf('51-virtualcluster-full.yaml');
      const resolved: JsonObject = {
        cell: {
          name: 'cell1',
          uid: '0f6c1d9e-4a5b-4c9e-9d51-1b2f3c4d5e6f',
          managedClusterName: 'cell1',
          machineProfile: {
            name: 'a100',
            devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }],
          },
        },
        class: {
          name: 'small',
          uid: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
          storageClassName: 'topolvm-provisioner',
          entitlement: { workloadHard: { 'requests.cpu': '4', 'requests.nvidia.com/gpu': '2' } },
        },
        hostNamespace: 'tenant-a',
        endpointAddress: '10.0.12.7',
        resolvedAt: '2026-11-30T00:00:00Z',
      };
      const withStatus = { ...vc, status: { phase: 'Provisioning', resolved } };
      expect(errorsOf(withStatus as JsonObject)).to.deep.equal([]);
      const changed = clone(withStatus) as JsonObject;
      ((changed.status as JsonObject).resolved as JsonObject).endpointAddress = '10.0.12.8';
      expectRejected(
        changed,
        /status\.resolved is an immutable snapshot/,
        withStatus as JsonObject,
      );
      const erased = clone(withStatus) as JsonObject;
      delete (erased.status as JsonObject).resolved;
      expectRejected(
        erased,
        /status\.resolved, once written, cannot be removed/,
        withStatus as JsonObject,
      );
    });

    it('VirtualClusterPlan: decision and evaluatedAt are kept within a generation', () => {
      const plan = sampleOf('41-virtualclusterplan-full.yaml');
      const evaluated = {
        ...plan,
        status: {
          observedGeneration: 1,
          decision: 'Accepted',
          evaluatedAt: '2026-11-30T00:00:00Z',
        },
      } as JsonObject;
      const reevaluated = clone(evaluated);
      (reevaluated.status as JsonObject).evaluatedAt = '2026-11-30T00:00:02Z';
      expectRejected(reevaluated, /a plan is evaluated once per generation/, evaluated);
      const flipped = clone(evaluated);
      (flipped.status as JsonObject).decision = 'Rejected';
      expectRejected(flipped, /a plan is evaluated once per generation/, evaluated);
      const nextGeneration = clone(reevaluated);
      (nextGeneration.status as JsonObject).observedGeneration = 2;
      expect(errorsOf(nextGeneration, evaluated)).to.deep.equal([]);
      const expired = clone(evaluated);
      (expired.status as JsonObject).conditions = [
        {
          type: 'Expired',
          status: 'True',
          reason: 'Expired',
          message: 'expired',
          lastTransitionTime: '2026-11-30T00:15:00Z',
        },
      ];
      expect(errorsOf(expired, evaluated)).to.deep.equal([]);
    });

    it('VirtualClusterPlan: an Unknown plan may be evaluated again within its generation', () => {
      const plan = sampleOf('41-virtualclusterplan-full.yaml');
      const unknown = {
        ...plan,
        status: { observedGeneration: 1, decision: 'Unknown', evaluatedAt: '2026-11-30T00:00:00Z' },
      } as JsonObject;
      const concluded = clone(unknown);
      Object.assign(concluded.status as JsonObject, {
        decision: 'Accepted',
        evaluatedAt: '2026-11-30T00:00:02Z',
      });
      expect(errorsOf(concluded, unknown)).to.deep.equal([]);
      const flipped = clone(concluded);
      (flipped.status as JsonObject).decision = 'Rejected';
      expectRejected(flipped, /only an Unknown plan is evaluated again/, concluded);
    });

    it('GPUCellPool: exactly one of resourceClaimName and resourceClaimTemplateName', () => {
      const both = pool();
      (spec(both).gpu as JsonObject).resourceClaimName = 'a100-0';
      expectRejected(both, /spec\.gpu must set exactly one/);
      const neither = pool();
      spec(neither).gpu = {};
      expectRejected(neither, /spec\.gpu must set exactly one/);
    });

    it('GPUCellPool: a named claim allows at most one replica, autoscaling included', () => {
      const named = pool();
      spec(named).gpu = { resourceClaimName: 'a100-0' };
      delete spec(named).autoscaling;
      expectRejected(named, /spec\.replicas must be 0 or 1/);
      spec(named).replicas = 1;
      expect(errorsOf(named)).to.deep.equal([]);
      spec(named).autoscaling = { minReplicas: 0, maxReplicas: 2 };
      expectRejected(named, /spec\.autoscaling\.maxReplicas must be at most 1/);
    });

    it('GPUCellPool: autoscaling.minReplicas <= maxReplicas, including the default', () => {
      const p = pool();
      spec(p).autoscaling = { minReplicas: 5, maxReplicas: 4 };
      expectRejected(p, /minReplicas must be less than or equal/);
      spec(p).autoscaling = { maxReplicas: 1 };
      expect(errorsOf(p)).to.deep.equal([]);
    });

    it('GPUCellPool: bootstrap provider and joinSecretRef', () => {
      const p = pool();
      spec(p).bootstrap = { provider: 'Opaque' };
      expectRejected(p, /joinSecretRef is required when spec\.bootstrap\.provider is Opaque/);
      spec(p).bootstrap = { provider: 'Cloudinit', joinSecretRef: { name: 'x' } };
      expectRejected(p, /must be equal to one of the allowed values/);
      spec(p).bootstrap = { provider: 'ClusterAPI' };
      expectRejected(p, /required when spec\.provisioner\.type is KubeVirt/);
      delete spec(p).bootstrap;
      expectRejected(p, /required when spec\.provisioner\.type is KubeVirt/);
    });

    it('GPUCellPool: a DNS-label name of at most 40 characters', () => {
      const long = pool();
      (long.metadata as JsonObject).name = 'a'.repeat(41);
      expectRejected(long, /metadata\.name of a GPUCellPool must be a DNS label of at most 40/);
      const dotted = pool();
      (dotted.metadata as JsonObject).name = 'a100.pool';
      expectRejected(dotted, /must be a DNS label/);
      const fine = pool();
      (fine.metadata as JsonObject).name = 'a'.repeat(40);
      expect(errorsOf(fine)).to.deep.equal([]);
    });

    it('GPUCellPool: spec.namespace and spec.provisioner.type are immutable', () => {
      const before = pool();
      const moved = clone(before);
      spec(moved).namespace = 'elsewhere';
      expectRejected(moved, /spec\.namespace is immutable/, before);
      const capi = sampleOf('36-gpucellpool-clusterapi.yaml');
      const switched = clone(capi);
      spec(switched).provisioner = clone(spec(before).provisioner as JsonObject);
      spec(switched).bootstrap = clone(spec(before).bootstrap as JsonObject);
      expectRejected(switched, /spec\.provisioner\.type is immutable/, capi);
      const rescaled = clone(before);
      spec(rescaled).replicas = 3;
      expect(errorsOf(rescaled, before)).to.deep.equal([]);
    });

    it('GPUCellPool: the network name default is reserved for the pod network', () => {
      const p = pool();
      const kubeVirt = (spec(p).provisioner as JsonObject).kubeVirt as JsonObject;
      kubeVirt.networks = [
        { name: 'default', networkAttachmentDefinition: 'kubecell-cells/storage-net' },
      ];
      expectRejected(p, /the name default is reserved for the pod network/);
    });

    it('VirtualCluster: a name of at most 63 characters', () => {
      const vc = sampleOf('51-virtualcluster-full.yaml');
      (vc.metadata as JsonObject).name = 'a'.repeat(64);
      expectRejected(vc, /metadata\.name of a VirtualCluster must be at most 63 characters/);
      (vc.metadata as JsonObject).name = 'a'.repeat(63);
      expect(errorsOf(vc)).to.deep.equal([]);
    });

    it('GPUCellPool: provisioner config matches its type', () => {
      const p = pool();
      (spec(p).provisioner as JsonObject).type = 'ClusterAPI';
      expectRejected(
        p,
        /spec\.provisioner\.kubeVirt is required when .* KubeVirt, and must be omitted/,
      );
      expectRejected(p, /spec\.provisioner\.clusterAPI is required/);
      const capi = sampleOf('36-gpucellpool-clusterapi.yaml');
      expect(errorsOf(capi)).to.deep.equal([]);
      const noJoin = clone(capi);
      delete ((spec(noJoin).provisioner as JsonObject).clusterAPI as JsonObject)
        .bootstrapConfigTemplateRef;
      expectRejected(noJoin, /set exactly one source of join data/);
      spec(noJoin).bootstrap = { provider: 'Opaque', joinSecretRef: { name: 'cell-join' } };
      expect(errorsOf(noJoin)).to.deep.equal([]);
      const twoSources = clone(capi);
      spec(twoSources).bootstrap = { provider: 'Opaque', joinSecretRef: { name: 'cell-join' } };
      expectRejected(twoSources, /set exactly one source of join data/);
    });

    it('GPUCellPool: spec.health, its defaults and its rules', () => {
      const p = pool();
      delete spec(p).health;
      expect(errorsOf(p)).to.deep.equal([]);
      const ready = pool();
      spec(ready).health = {
        unhealthyConditions: [{ type: 'Ready', status: 'True', durationSeconds: 60 }],
      };
      expectRejected(ready, /Ready True is a healthy Node/);
      const release = pool();
      spec(release).health = { remediation: 'None', releaseTimeoutSeconds: 600 };
      expectRejected(release, /releaseTimeoutSeconds applies only to remediation Replace/);
      spec(release).health = { remediation: 'Replace', releaseTimeoutSeconds: 600 };
      expect(errorsOf(release)).to.deep.equal([]);
      for (const maxUnhealthy of [0, 3, '0%', '40%', '100%']) {
        spec(release).health = { maxUnhealthy };
        expect(errorsOf(release), String(maxUnhealthy)).to.deep.equal([]);
      }
      for (const maxUnhealthy of ['101%', '-1', '40 %', 'all']) {
        spec(release).health = { maxUnhealthy };
        expectRejected(release, /pattern/);
      }
    });

    it('VirtualNodeClass: entitlement keys are ResourceQuota names, quantities not negative', () => {
      const cls = sampleOf('21-virtualnodeclass-full.yaml');
      const hard = () => (spec(cls).entitlement as JsonObject).workloadHard as JsonObject;
      const good = [
        'requests.cpu',
        'limits.memory',
        'cpu',
        'pods',
        'services.nodeports',
        'requests.huawei.com/Ascend910B3',
        'limits.nvidia.com/gpu',
        'requests.hugepages-2Mi',
        'count/deployments.apps',
        'topolvm-provisioner.storageclass.storage.k8s.io/requests.storage',
      ];
      for (const key of good) {
        hard()[key] = '1';
        expect(errorsOf(cls), key).to.deep.equal([]);
        delete hard()[key];
      }
      for (const key of ['nvidia.com/gpu', 'gpu', 'requests.gpu', 'limits.', 'Requests.cpu']) {
        hard()[key] = '1';
        expectRejected(cls, /workloadHard keys must be ResourceQuota resource names/);
        delete hard()[key];
      }
      hard()['requests.cpu'] = '-1';
      expectRejected(cls, /must match pattern/);
      hard()['requests.cpu'] = -1;
      expectRejected(cls, /must be >= 0/);
      hard()['requests.cpu'] = 'lots';
      expectRejected(cls, /must match pattern/);
    });

    after('every rule the CRDs carry was seen rejecting an object', () => {
      const uncovered = [...generatedSchemas.values()]
        .flatMap((schema) => [...rulesOf(schema)])
        .filter((rule) => !rulesSeenRejecting.has(rule));
      expect(uncovered, 'CEL rules without a rejecting test').to.deep.equal([]);
    });

    it('Cell: a device resourceName is declared once', () => {
      const cell = sampleOf('11-cell-full.yaml');
      const profile = spec(cell).machineProfile as JsonObject;
      (profile.devices as JsonObject[]).push({ name: 'gpu2', resourceName: 'nvidia.com/gpu' });
      expectRejected(cell, /each resourceName may be declared by only one device/);
    });

    it('VirtualClusterPlan: one of cellRef and cellSelector, a policy only with a selector, spreadKey only with Spread', () => {
      const plan = sampleOf('42-virtualclusterplan-selector.yaml');
      expect(errorsOf(plan)).to.deep.equal([]);
      spec(plan).cellRef = { name: 'cell1' };
      expectRejected(plan, /exactly one of spec.cellRef .* and spec.cellSelector/);
      delete spec(plan).cellSelector;
      expectRejected(plan, /spec.placementPolicy chooses among the Cells of spec.cellSelector/);
      delete spec(plan).placementPolicy;
      expect(errorsOf(plan)).to.deep.equal([]);
      delete spec(plan).cellRef;
      expectRejected(plan, /exactly one of spec.cellRef .* and spec.cellSelector/);
      const spread = sampleOf('42-virtualclusterplan-selector.yaml');
      spec(spread).placementPolicy = { type: 'Spread', spreadKey: 'topology.kubernetes.io/zone' };
      expect(errorsOf(spread)).to.deep.equal([]);
      spec(spread).placementPolicy = { type: 'Spread' };
      expectRejected(spread, /spreadKey is required with type Spread/);
      spec(spread).placementPolicy = { type: 'Pack', spreadKey: 'zone' };
      expectRejected(spread, /not allowed with MostAvailable or Pack/);
      // The policy recorded in the status follows the same rule.
      const decided = sampleOf('42-virtualclusterplan-selector.yaml');
      decided.status = {
        placement: { policy: { type: 'MostAvailable', spreadKey: 'zone' }, candidates: 1 },
      };
      expectRejected(decided, /not allowed with MostAvailable or Pack/);
    });

    it('VirtualCluster: one of cellRef and cellSelector, fixed at creation with its policy', () => {
      const vc = sampleOf('52-virtualcluster-selector.yaml');
      expect(errorsOf(vc)).to.deep.equal([]);
      const both = clone(vc);
      spec(both).cellRef = { name: 'cell1' };
      expectRejected(both, /exactly one of spec.cellRef .* and spec.cellSelector/);
      const reselected = clone(vc);
      spec(reselected).cellSelector = { matchLabels: { 'example.com/accelerator': 'nvidia' } };
      expectRejected(reselected, /spec\.cellSelector is immutable/, vc);
      const repolicied = clone(vc);
      spec(repolicied).placementPolicy = { type: 'Pack' };
      expectRejected(repolicied, /spec\.placementPolicy is immutable/, vc);
      const unpolicied = clone(vc);
      delete spec(unpolicied).placementPolicy;
      expectRejected(unpolicied, /spec\.placementPolicy is immutable/, vc);
      const named = sampleOf('51-virtualcluster-full.yaml');
      expectRejected(clone(vc), /spec\.cellRef is immutable/, named);
      expectRejected(named, /spec\.cellSelector is immutable/, vc);
      // The snapshot records the choice with the plan's report shape.
      const resolved = clone(vc);
      resolved.status = {
        resolved: {
          cell: {
            name: 'cell2',
            uid: 'u',
            managedClusterName: 'cell1',
            machineProfile: { name: 'p' },
          },
          class: {
            name: 'cpu-small',
            uid: 'u',
            storageClassName: 's',
            entitlement: { workloadHard: {} },
          },
          hostNamespace: 'tenant-d',
          endpointAddress: '10.0.0.1',
          resolvedAt: '2026-12-07T00:00:00Z',
          placement: { policy: { type: 'Pack', spreadKey: 'zone' }, candidates: 1 },
        },
      };
      expectRejected(resolved, /not allowed with MostAvailable or Pack/);
    });

    it('Cell and VirtualNodeClass: a namespaceSelector is a well-formed label selector', () => {
      for (const file of ['11-cell-full.yaml', '21-virtualnodeclass-full.yaml']) {
        const object = sampleOf(file);
        spec(object).namespaceSelector = {
          matchLabels: { 'example.com/team': 'research', 'kubernetes.io/metadata.name': 'a' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['gpu', 'npu'] },
            { key: 'legacy', operator: 'DoesNotExist' },
            { key: 'env', operator: 'NotIn', values: ['prod'] },
            { key: 'owner', operator: 'Exists', values: [] },
          ],
        };
        expect(errorsOf(object), file).to.deep.equal([]);
        spec(object).namespaceSelector = {};
        expect(errorsOf(object), `${file}: {} selects every namespace`).to.deep.equal([]);
        for (const key of ['Bad Key', 'example.com/', '/team', 'Example.com/team']) {
          spec(object).namespaceSelector = { matchLabels: { [key]: 'x' } };
          expectRejected(object, /matchLabels: keys must be label keys/);
        }
        for (const expression of [
          { key: 'tier', operator: 'In' } as JsonObject,
          { key: 'tier', operator: 'NotIn', values: [] },
          { key: 'tier', operator: 'Exists', values: ['gpu'] },
          { key: 'tier', operator: 'DoesNotExist', values: ['gpu'] },
        ]) {
          spec(object).namespaceSelector = { matchExpressions: [expression] };
          expectRejected(object, /In and NotIn need at least one value/);
        }
        spec(object).namespaceSelector = { matchExpressions: [{ key: 'tier', operator: 'Gt' }] };
        expectRejected(object, /must be equal to one of the allowed values/);
        spec(object).namespaceSelector = { matchLabels: { team: 'not a label value' } };
        expectRejected(object, /must match pattern/);
      }
    });
  });
});
