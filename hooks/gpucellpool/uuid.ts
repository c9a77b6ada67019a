/**
 * The firmware UUID of a cell incarnation: a name-based UUID (RFC 9562 version 5, SHA-1) in
 * KubeCell's namespace, of the name `<pool uid>/<cell name>/<incarnation>`. The same inputs give
 * the same UUID on every hook server, at every time, so a restart of the hook server changes
 * nothing; a new incarnation of the same cell gets a new UUID, so a Node its predecessor left
 * behind never passes for the new one.
 */
import { createHash } from 'node:crypto';
import { FIRMWARE_UUID_NAMESPACE } from './constants.js';

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

function formatUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return [
    hex.slice(0, 8),
    hex.slice(8, 12),
    hex.slice(12, 16),
    hex.slice(16, 20),
    hex.slice(20, 32),
  ].join('-');
}

/** RFC 9562 version 5: SHA-1 of namespace + name, version and variant bits set. */
export function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1')
    .update(uuidBytes(namespace))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16);
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  return formatUuid(hash);
}

export function firmwareUuid(poolUid: string, cellName: string, incarnation: number): string {
  return uuidV5(FIRMWARE_UUID_NAMESPACE, `${poolUid}/${cellName}/${incarnation}`);
}

/** UUIDs compare case-insensitively (dmidecode and KubeVirt may differ in case). */
export function sameUuid(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}
