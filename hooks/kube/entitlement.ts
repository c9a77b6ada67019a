/** Quota keys that name a Node resource directly (the ResourceQuota shorthand for requests.*). */
const BARE_NODE_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);

/**
 * The Node resource a ResourceQuota key constrains, or undefined when it constrains none:
 * `requests.cpu` and `cpu` → `cpu`, `requests.nvidia.com/gpu` → `nvidia.com/gpu`. Limits, object
 * counts and `requests.storage` (PVC storage, not a Node resource) map to nothing.
 */
export function nodeResourceOfQuotaKey(key: string): string | undefined {
  if (BARE_NODE_RESOURCES.has(key)) return key;
  if (!key.startsWith('requests.')) return undefined;
  const resource = key.slice('requests.'.length);
  return resource === 'storage' ? undefined : resource;
}
