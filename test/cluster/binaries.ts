// Moved to harness/cluster/binaries.ts (issue 27, item 5). This re-export stays while
// hooks/admission/config-and-manifests.test.ts imports it here.
export * from '../../harness/cluster/binaries.js';
