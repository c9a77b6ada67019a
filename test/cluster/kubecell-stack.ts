// Moved to harness/cluster/kubecell-stack.ts (issue 27, item 5). This re-export stays while
// test/cluster/e2e/gpucellpool-*.ts (being rewritten) import it here.
export * from '../../harness/cluster/kubecell-stack.js';
