// Builds (or reuses) the control-plane binaries for the cluster tests.
//
//   npx tsx test/cluster/build-binaries.ts                      build unless the stamp matches
//   npx tsx test/cluster/build-binaries.ts --force              rebuild everything
//   npx tsx test/cluster/build-binaries.ts --verbose            also show the go command's output
//   npx tsx test/cluster/build-binaries.ts --update-go-modules  rewrite go.mod/go.sum from versions.json
import {
  ensureBinaries,
  GoNotInstalledError,
  UpstreamArchiveError,
  updateGoModules,
} from '../../harness/cluster/binaries.js';

function log(line: string): void {
  process.stderr.write(`[build-binaries] ${line}\n`);
}

async function main(argv: readonly string[]): Promise<number> {
  const known = new Set(['--force', '--verbose', '--update-go-modules']);
  const unknown = argv.filter((arg) => !known.has(arg));
  if (unknown.length > 0) {
    log(`unknown argument(s): ${unknown.join(' ')}; expected ${[...known].join(', ')}`);
    return 2;
  }

  if (argv.includes('--update-go-modules')) {
    const failures = await updateGoModules(log);
    for (const [component, answer] of Object.entries(failures)) {
      log(`${component}: the go command could not resolve the pinned version:\n${answer}`);
    }
    log('done; commit test/cluster/go/**/go.mod and go.sum');
    return 0;
  }

  const built = await ensureBinaries({
    force: argv.includes('--force'),
    verbose: argv.includes('--verbose'),
    log,
  });
  if (built.reused) {
    log(
      `binaries are up to date in ${built.binDir} (checked in ${built.totalSeconds.toFixed(2)} s, nothing built)`,
    );
  } else {
    const perComponent = Object.entries(built.timingsSeconds)
      .map(([component, seconds]) => `${component} ${seconds.toFixed(1)} s`)
      .join(', ');
    log(`built into ${built.binDir} in ${built.totalSeconds.toFixed(1)} s (${perComponent})`);
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof GoNotInstalledError || error instanceof UpstreamArchiveError) {
      log(error.message);
    } else {
      log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
    process.exitCode = 1;
  },
);
