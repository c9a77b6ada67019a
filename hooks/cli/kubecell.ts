#!/usr/bin/env -S npx tsx
/**
 * The `kubecell` command line (cli.ts):
 *
 *   kubecell validate -f <file|directory|->   check manifests offline with the webhook's rules
 *   kubecell kubeconfig <name> -n <namespace> print the admin kubeconfig of a Ready VirtualCluster
 *   kubecell agent [--once]                   run the cell agent on a managed cluster
 *
 * Users install it as the npm package `npm run build:cli` bundles from this file
 * (scripts/cli-package/; docs/operations.md, Install the CLI), which runs without this
 * repository. From the source tree, as the tests and the image's cell agent run it:
 * `npx tsx hooks/cli/kubecell.ts validate -f samples/` or `node --import tsx hooks/cli/kubecell.ts`.
 */
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
