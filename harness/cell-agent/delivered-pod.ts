// How local-up plays the kubelet for the cell agent the hub delivers to cell-remote: the
// ManifestWork kubecell-cell-agent applies a Deployment there (hooks/delivery/agent-work.ts), and
// with no kubelet nothing would run it. These pure functions read what its one container is to
// run, the way a kubelet reads the pod template: command and arguments, environment, the
// ServiceAccount whose token it gets, and the ConfigMaps it mounts as files.
import { isJsonObject } from '../../hooks/json/json.js';

export interface ConfigMapMount {
  /** Where the container sees the files (each key a file). */
  mountPath: string;
  volume: string;
  configMap: string;
  optional: boolean;
}

export interface DeliveredPod {
  /** Command then arguments; `node` is run as this Node.js. */
  argv: string[];
  /** The container's literal environment (valueFrom entries are not supported here). */
  env: Record<string, string>;
  serviceAccountName: string;
  mounts: ConfigMapMount[];
}

type Json = Record<string, unknown>;

function objectAt(value: unknown, ...keys: string[]): Json | undefined {
  let current: unknown = value;
  for (const key of keys) current = isJsonObject(current) ? current[key] : undefined;
  return isJsonObject(current) ? current : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : [];
}

function listOf(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((item): item is Json => isJsonObject(item)) : [];
}

/** The ConfigMap volumes the container mounts. */
function configMapMounts(spec: Json, container: Json): ConfigMapMount[] {
  const volumes = listOf(spec.volumes);
  return listOf(container.volumeMounts).flatMap((mount) => {
    const volume = volumes.find((candidate) => candidate.name === mount.name);
    const configMap = objectAt(volume, 'configMap');
    if (!configMap || typeof configMap.name !== 'string' || typeof mount.mountPath !== 'string') {
      return [];
    }
    return [
      {
        mountPath: mount.mountPath,
        volume: String(mount.name),
        configMap: configMap.name,
        optional: configMap.optional === true,
      },
    ];
  });
}

/** What the Deployment's first container runs, or why it cannot be run here. */
export function deliveredPod(deployment: unknown): DeliveredPod | { problem: string } {
  const spec = objectAt(deployment, 'spec', 'template', 'spec');
  const container = listOf(spec?.containers)[0];
  if (!spec || !container) return { problem: 'the Deployment has no pod template container' };
  const argv = [...strings(container.command), ...strings(container.args)];
  if (argv.length === 0) {
    return { problem: 'the container names no command (an image entrypoint cannot be run here)' };
  }
  const env: Record<string, string> = {};
  for (const variable of listOf(container.env)) {
    if (typeof variable.name !== 'string') continue;
    if (typeof variable.value !== 'string') {
      return { problem: `env ${variable.name} is not a literal value` };
    }
    env[variable.name] = variable.value;
  }
  return {
    argv,
    env,
    serviceAccountName:
      typeof spec.serviceAccountName === 'string' ? spec.serviceAccountName : 'default',
    mounts: configMapMounts(spec, container),
  };
}

/**
 * The process environment of the container: its variables, with every path under a mount
 * moved to the folder where that ConfigMap was projected (`projected`: mountPath → folder).
 */
export function processEnvironment(
  pod: DeliveredPod,
  projected: ReadonlyMap<string, string>,
): Record<string, string> {
  const moved = (value: string): string => {
    for (const [mountPath, folder] of projected) {
      if (value === mountPath) return folder;
      if (value.startsWith(`${mountPath}/`)) return folder + value.slice(mountPath.length);
    }
    return value;
  };
  return Object.fromEntries(Object.entries(pod.env).map(([name, value]) => [name, moved(value)]));
}
