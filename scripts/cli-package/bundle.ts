/**
 * The `kubecell` command as one ES module: hooks/cli/kubecell.ts and everything it imports (the
 * generated validators and schemas, CEL, yaml, @kubernetes/client-node, ...) bundled by esbuild,
 * so that the package (package.ts) has no dependencies and needs neither tsx nor the repository.
 */
import { build, type Metafile, type Plugin } from 'esbuild';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The entry point, relative to the repository. */
export const CLI_ENTRY = 'hooks/cli/kubecell.ts';

/**
 * Dependencies bundled as CommonJS call `require` for Node's built-in modules ("stream", ...);
 * an ES module has no `require`, so the bundle makes one. It is the only `import.meta.url` the
 * bundle may hold: any other would be a file read beside a source file, absent once installed.
 */
const REQUIRE_BANNER =
  "import { createRequire as kubecellCreateRequire } from 'node:module';\n" +
  'const require = kubecellCreateRequire(import.meta.url);';

/** The preamble scripts/codegen/validators.ts gives ajv's standalone code, which uses require(). */
const VALIDATORS_PREAMBLE =
  "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n";

/**
 * hooks/generated/validators.js requires ajv's runtime helpers and ajv-formats through a require
 * of its own making, which esbuild cannot follow: without its preamble those become plain
 * require() calls, which esbuild bundles. The generated file itself is left as it is.
 */
const bundleValidatorRequires: Plugin = {
  name: 'kubecell-validators-require',
  setup(plugin) {
    plugin.onLoad({ filter: /[\\/]hooks[\\/]generated[\\/]validators\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes(VALIDATORS_PREAMBLE)) {
        return {
          errors: [
            {
              text:
                `${args.path} no longer starts ajv's code with the createRequire preamble this ` +
                'build removes (scripts/codegen/validators.ts changed): update ' +
                'scripts/cli-package/bundle.ts to bundle its requires',
            },
          ],
        };
      }
      return { contents: text.replace(VALIDATORS_PREAMBLE, ''), loader: 'js' };
    });
  },
};

export interface Bundle {
  /** The program, a `#!/usr/bin/env node` script. */
  text: string;
  /** What went into it (esbuild's metafile; input paths relative to the repository). */
  metafile: Metafile;
}

/** Bundles the `kubecell` command; throws, naming the cause, if the result would need the repository. */
export async function bundleCli(repoRoot: string): Promise<Bundle> {
  const result = await build({
    absWorkingDir: repoRoot,
    entryPoints: [path.join(repoRoot, CLI_ENTRY)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    write: false,
    outfile: 'kubecell.mjs',
    metafile: true,
    banner: { js: REQUIRE_BANNER },
    // Third-party licences go whole into THIRD-PARTY-NOTICES.md (notices.ts).
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [bundleValidatorRequires],
  });
  if (result.warnings.length > 0) {
    throw new Error(`esbuild warned: ${result.warnings.map((w) => w.text).join('; ')}`);
  }
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error('esbuild wrote no output');
  // The entry's own `#!/usr/bin/env -S npx tsx` would need tsx: the package runs on Node alone.
  const text = `#!/usr/bin/env node\n${output.text.replace(/^#!.*\n/, '')}`;
  checkSelfContained(text, repoRoot);
  return { text, metafile: result.metafile };
}

/** What would make the installed program reach for the source tree. */
function checkSelfContained(text: string, repoRoot: string): void {
  const uses = text.split('import.meta.url').length - 1;
  if (uses !== 1) {
    throw new Error(
      `the bundle uses import.meta.url ${uses} times, the require banner only once expected: a ` +
        'module reads a file beside its source (new URL(..., import.meta.url)) or makes its own ' +
        'require; import the file instead (as hooks/api/kinds.ts imports the schemas)',
    );
  }
  if (text.includes(repoRoot)) {
    throw new Error(`the bundle names the repository's path ${repoRoot}`);
  }
}
