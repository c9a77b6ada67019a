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
import { ConfigError } from '../config/env-reader.js';
import { SETTINGS_DEFAULTS } from './constants.js';

export interface GPUCellPoolConfig {
  /** matchLabels of the consumer namespaces. */
  consumerNamespaceLabels: Readonly<Record<string, string>>;
  /** The extended resource a consumer pod requests for the GPU, matched character for character. */
  gpuResource: string;
}

const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/** Parses `a=b,c=d`; undefined when malformed. */
export function parseMatchLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  for (const part of text.split(',')) {
    const match = /^\s*([^=\s]+)\s*=\s*([^=\s]*)\s*$/.exec(part);
    if (!match) return undefined;
    const [, key = '', value = ''] = match;
    if (!QUALIFIED_NAME.test(key) || !LABEL_VALUE.test(value) || key in labels) return undefined;
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

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadGPUCellPoolConfig(env: NodeJS.ProcessEnv = process.env): GPUCellPoolConfig {
  const problems: string[] = [];
  const read = (name: keyof typeof SETTINGS_DEFAULTS): string => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? SETTINGS_DEFAULTS[name] : value;
  };

  const selectorText = read('KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR');
  const consumerNamespaceLabels = parseMatchLabels(selectorText);
  if (consumerNamespaceLabels === undefined) {
    problems.push(
      `KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR=${JSON.stringify(selectorText)} is not a ` +
        `label selector; set it to key=value pairs joined by commas, e.g. ` +
        `${SETTINGS_DEFAULTS.KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR} (the default)`,
    );
  }
  const gpuResource = read('KUBECELL_GPUCELLPOOL_GPU_RESOURCE');
  if (!QUALIFIED_NAME.test(gpuResource) || !gpuResource.includes('/')) {
    problems.push(
      `KUBECELL_GPUCELLPOOL_GPU_RESOURCE=${JSON.stringify(gpuResource)} is not an extended ` +
        `resource name; set it to the resource consumer pods request, e.g. ` +
        `${SETTINGS_DEFAULTS.KUBECELL_GPUCELLPOOL_GPU_RESOURCE} (the default)`,
    );
  }
  if (problems.length > 0 || consumerNamespaceLabels === undefined) {
    throw new ConfigError(problems);
  }
  return { consumerNamespaceLabels, gpuResource };
}
