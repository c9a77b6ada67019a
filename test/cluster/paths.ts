// Moved to harness/cluster/paths.ts (issue 27, item 5). This re-export stays while
// hooks/delivery/works-crd.test.ts and test/cluster/e2e/gpucellpool-support.ts import it here.
export * from '../../harness/cluster/paths.js';
