import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import standaloneCodeModule from 'ajv/dist/standalone/index.js';
import { slashHeader } from './header.js';
import type { SchemaNode } from './schema-source.js';

// ajv-formats and ajv's standalone are CommonJS with `exports.default`; under NodeNext the default
// import is typed as the module object, and both carry the function on `.default` at run time too.
const addFormats = addFormatsModule.default;
const standaloneCode = standaloneCodeModule.default;

/** Kubernetes' schema extensions carry meaning for the apiserver; to ajv they are annotations. */
const ANNOTATION_KEYWORDS = [
  'x-kubernetes-validations',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
];

/** The ajv instance both the generator and the tests use, so they agree on what is valid. */
export function createAjv(options: { source: boolean }): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    // Quantities are int-or-string with a pattern on the string branch; ajv's strictTypes would
    // want the pattern under the string branch, Kubernetes wants it beside anyOf.
    strictTypes: false,
    code: options.source ? { source: true, esm: true } : {},
  });
  addFormats(ajv);
  for (const keyword of ANNOTATION_KEYWORDS) ajv.addKeyword({ keyword });
  return ajv;
}

export function validatorName(kind: string): string {
  return `validate${kind}`;
}

/** Standalone ajv code: the webhook validates without compiling schemas at start-up. */
export function renderValidators(bundled: Map<string, SchemaNode>): { js: string; dts: string } {
  const ajv = createAjv({ source: true });
  const exports: Record<string, string> = {};
  for (const [kind, schema] of bundled) {
    const id = `kubecell.io/v1alpha1/${kind}`;
    ajv.addSchema({ ...schema, $id: id });
    exports[validatorName(kind)] = id;
  }
  const code = standaloneCode(ajv, exports);
  // ajv's standalone output uses require() for formats even in ESM mode.
  const js = `${slashHeader}import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${code}\n`;
  const declarations = [...bundled.keys()]
    .map((kind) => `export declare const ${validatorName(kind)}: GeneratedValidator;`)
    .join('\n');
  const dts = `${slashHeader}import type { ErrorObject } from 'ajv';

export interface GeneratedValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

${declarations}
`;
  return { js, dts };
}
