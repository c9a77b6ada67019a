// Lists, from the real apiserver, the objects a customize hook's rules select, keyed the way
// v2 hooks key them. Tests use it to feed pure sync functions real objects; it is not a
// controller and does not imitate Metacontroller's sync loop.
import {
  childKey,
  objectKey,
  type KubernetesObject,
  type ObjectMap,
  type RelatedResourceRule,
} from '../../hooks/metacontroller/protocol.js';
import type { ControlPlane } from '../../harness/cluster/control-plane.js';

export async function listRelated(
  cluster: ControlPlane,
  rules: readonly RelatedResourceRule[],
): Promise<ObjectMap> {
  const map: ObjectMap = {};
  for (const rule of rules) {
    const group = rule.apiVersion.includes('/') ? rule.apiVersion.split('/')[0] : '';
    const resource = group ? `${rule.resource}.${group}` : rule.resource;
    const matchLabels = rule.labelSelector?.matchLabels ?? {};
    const selector = Object.entries(matchLabels)
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    const listed = await cluster.kubectl([
      'get',
      resource,
      '-A',
      '-o',
      'json',
      ...(selector ? ['-l', selector] : []),
    ]);
    if (listed.code !== 0) throw new Error(`listing ${resource} failed: ${listed.stderr}`);
    const kinds = await cluster.kubectl(['explain', resource, '--api-version', rule.apiVersion]);
    const kind = /^KIND:\s+(\S+)/m.exec(kinds.stdout)?.[1];
    if (!kind) throw new Error(`no kind for ${resource}: ${kinds.stderr}`);
    const objects = (map[childKey(rule.apiVersion, kind)] ??= {});
    for (const item of (JSON.parse(listed.stdout) as { items: KubernetesObject[] }).items) {
      if (rule.names && !rule.names.includes(item.metadata.name)) continue;
      if (rule.namespace && item.metadata.namespace !== rule.namespace) continue;
      objects[objectKey(item)] = item;
    }
  }
  return map;
}
