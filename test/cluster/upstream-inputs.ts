// `npx tsx test/cluster/upstream-inputs.ts` (and `npm test` before anything else): checks every
// upstream input pinned in upstream-inputs.json beside this file by sha256 and prints the result.
// The check itself is harness/cluster/upstream-inputs.ts, which local-up and the stack run too.
import { verifyUpstreamInputs } from '../../harness/cluster/upstream-inputs.js';

try {
  const { dir, inputs } = verifyUpstreamInputs();
  process.stdout.write(`all ${inputs.length} upstream inputs in ${dir} match their sha256\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
