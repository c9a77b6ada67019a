/**
 * Settings of the kubecell-gpucellpool controller, read once at startup from the environment.
 *
 * | Variable                                           | Default                           |
 * |----------------------------------------------------|-----------------------------------|
 * | `KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR` | `kubecell.io/host-namespace=true` |
 * | `KUBECELL_GPUCELLPOOL_GPU_RESOURCE`                | `nvidia.com/gpu`                  |
 *
 * The first selects the consumer namespaces: only pods there count as GPU demand or as holding a
 * cell's GPU. It is `key=value` pairs joined by commas (all must match), because it becomes the
 * `matchLabels` of a customize rule. The second is the extended resource a consumer pod requests
 * (HAMi's `nvidia.com/gpu` by default). Invalid values throw a `ConfigError` naming the variable.
 */
import { EnvReader } from '../config/env-reader.js';
import { isLabelValue } from '../kube/labels.js';
import { SETTINGS_DEFAULTS } from './constants.js';

export interface GPUCellPoolConfig {
  /** matchLabels of the consumer namespaces. */
  consumerNamespaceLabels: Readonly<Record<string, string>>;
  /** The extended resource a consumer pod requests for the GPU, matched character for character. */
  gpuResource: string;
}

const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** Parses `a=b,c=d`; undefined when malformed. */
export function parseMatchLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  for (const part of text.split(',')) {
    const match = /^\s*([^=\s]+)\s*=\s*([^=\s]*)\s*$/.exec(part);
    if (!match) return undefined;
    const [, key = '', value = ''] = match;
    if (!QUALIFIED_NAME.test(key) || !isLabelValue(value) || key in labels) return undefined;
    labels[key] = value;
  }
  return Object.keys(labels).length > 0 ? labels : undefined;
}

function defaults(): GPUCellPoolConfig {
  return {
    consumerNamespaceLabels: parseMatchLabels(
      SETTINGS_DEFAULTS.KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR,
    ) as Record<string, string>,
    gpuResource: SETTINGS_DEFAULTS.KUBECELL_GPUCELLPOOL_GPU_RESOURCE,
  };
}

export const DEFAULT_GPUCELLPOOL_CONFIG: Readonly<GPUCellPoolConfig> = Object.freeze(defaults());

const SELECTOR = 'KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR';
const GPU_RESOURCE = 'KUBECELL_GPUCELLPOOL_GPU_RESOURCE';

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadGPUCellPoolConfig(env: NodeJS.ProcessEnv = process.env): GPUCellPoolConfig {
  const reader = new EnvReader(env);
  const config = {
    consumerNamespaceLabels: consumerNamespaceLabels(reader),
    gpuResource: gpuResource(reader),
  };
  reader.finish();
  return config;
}

/** The consumer namespace selector; the default (and a problem) when it is not one. */
function consumerNamespaceLabels(reader: EnvReader): Readonly<Record<string, string>> {
  const text = reader.text(SELECTOR, SETTINGS_DEFAULTS[SELECTOR]);
  const labels = parseMatchLabels(text);
  if (labels !== undefined) return labels;
  reader.problem(
    `${SELECTOR}=${JSON.stringify(text)} is not a label selector; set it to key=value pairs ` +
      `joined by commas, e.g. ${SETTINGS_DEFAULTS[SELECTOR]} (the default)`,
  );
  return DEFAULT_GPUCELLPOOL_CONFIG.consumerNamespaceLabels;
}

/** The extended resource consumer pods request; the default (and a problem) when it is not one. */
function gpuResource(reader: EnvReader): string {
  const name = reader.text(GPU_RESOURCE, SETTINGS_DEFAULTS[GPU_RESOURCE]);
  if (QUALIFIED_NAME.test(name) && name.includes('/')) return name;
  reader.problem(
    `${GPU_RESOURCE}=${JSON.stringify(name)} is not an extended resource name; set it to the ` +
      `resource consumer pods request, e.g. ${SETTINGS_DEFAULTS[GPU_RESOURCE]} (the default)`,
  );
  return SETTINGS_DEFAULTS[GPU_RESOURCE];
}
