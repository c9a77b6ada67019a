#!/usr/bin/env -S npx tsx
/**
 * The `kubecell` command line (cli.ts):
 *
 *   kubecell validate -f <file|directory|->   check manifests offline with the webhook's rules
 *   kubecell kubeconfig <name> -n <namespace> print the admin kubeconfig of a Ready VirtualCluster
 *   kubecell agent [--once]                   run the cell agent on a managed cluster
 *
 * Run it with `npx tsx hooks/cli/kubecell.ts validate -f samples/`, or as `kubecell` once the
 * package is installed (package.json `bin`).
 */
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
