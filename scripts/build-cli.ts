// `npm run build:cli [-- --out=<dir>]`: the `kubecell` command as an npm package,
// <dir>/kubecell-cli-<version>.tgz (default dir: dist/; scripts/cli-package/), to install with
// `npm install -g` (docs/operations.md, Install the CLI).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCliPackage } from './cli-package/package.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv.slice(2).find((arg) => arg.startsWith('--out='));
const unknown = process.argv.slice(2).filter((arg) => arg !== out);
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}; usage: build-cli.ts [--out=<dir>]`);
  process.exit(2);
}
const outDir = out ? path.resolve(out.slice('--out='.length)) : path.join(repoRoot, 'dist');
const { tarball, manifest } = await buildCliPackage(repoRoot, outDir);
const relative = path.relative(process.cwd(), tarball);
console.log(`${manifest.name} ${manifest.version}: ${relative}`);
console.log(`install it with: npm install -g ./${relative}`);
