// Moved to harness/cluster/kubecell.ts (issue 27, item 5). This re-export stays while
// hooks/admission/apiserver.test.ts imports it here.
export * from '../../harness/cluster/kubecell.js';
