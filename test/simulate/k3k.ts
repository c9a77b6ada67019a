// The simulated k3k moved to harness/simulate/k3k.ts (issue 27, item 5). This re-export stays
// while hooks/virtualcluster/kubeconfig-policy.test.ts imports it here.
export * from '../../harness/simulate/k3k.js';
