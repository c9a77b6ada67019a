#!/usr/bin/env -S npx tsx
/**
 * The `kubecell` command line. One command for now:
 *
 *   kubecell validate -f <file|directory|->   check manifests offline with the webhook's rules
 *
 * Run it with `npx tsx hooks/cli/kubecell.ts validate -f samples/`, or as `kubecell` once the
 * package is installed (package.json `bin`).
 */
import { runCli } from './validate.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
