/** Fixtures for the remote/ tests and for the modules that read reports. */
import { constants, createCipheriv, publicEncrypt, randomBytes } from 'node:crypto';
import type { CellReport } from './report.js';

/** A report of profile a100: two Nodes, one Ready, with GPUs, TopoLVM and NodePorts. */
export function sampleReport(): CellReport {
  return {
    version: 1,
    machineProfile: 'a100',
    observedAt: '2026-12-01T12:00:00Z',
    nodeCount: { total: 2, ready: 1 },
    notReadyNodes: [{ name: 'gpu-2', reasons: ['KubeletNotReady'] }],
    nodeAddresses: [{ node: 'gpu-1', address: '10.0.0.11' }],
    resources: {
      cpu: { capacity: '64', allocatable: '62', requested: '4', pending: '0' },
      'nvidia.com/gpu': { capacity: '8', allocatable: '8', requested: '2', pending: '1' },
    },
    storageInventory: {
      provisioner: 'topolvm.io',
      allocatedPV: '10Gi',
      freeCapacity: '900Gi',
      freeCapacityKnown: true,
      freeCapacitySource: 'TopoLVMNodeAnnotations',
      fresh: true,
    },
    nodePorts: { allocated: 3, fresh: true },
    provider: {
      k3kVersion: 'v1.1.0',
      namespaceReady: true,
      k3kCRDsReady: true,
      controllerReady: true,
      cniReady: true,
      topolvmReady: true,
    },
  };
}

/**
 * `plaintext` sealed as an agent before envelope version 2 sealed it (version 1: no key id, no
 * cluster, no signature; the UID as additional data), to test that the hub still opens it.
 */
export function sealVersion1(publicKeyPem: string, uid: string, plaintext: string): string {
  const contentKey = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', contentKey, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(uid, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const key = publicEncrypt(
    { key: publicKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    contentKey,
  );
  const envelope = {
    v: 1,
    alg: 'RSA-OAEP-256+A256GCM',
    key: key.toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
  return Buffer.from(JSON.stringify(envelope), 'utf8').toString('base64');
}
