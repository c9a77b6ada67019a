export * from './common.js';
export * from './cell.js';
export * from './gpucellpool.js';
export * from './virtualcluster.js';
export * from './virtualclusterplan.js';
export * from './virtualnodeclass.js';
