// The simulation moved to harness/simulate/ (issue 27, item 5). This re-export stays while the
// GPUCellPool e2e files (test/cluster/e2e/gpucellpool-*.ts, being rewritten) import it here.
export * from '../../harness/simulate/index.js';
