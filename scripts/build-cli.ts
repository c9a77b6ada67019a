// `npm run build:cli`: the `kubecell` command as an npm package, dist/kubecell-cli-<version>.tgz
// (scripts/cli-package/), to install with `npm install -g` (docs/operations.md, Install the CLI).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCliPackage } from './cli-package/package.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { tarball, manifest } = await buildCliPackage(repoRoot, path.join(repoRoot, 'dist'));
const relative = path.relative(process.cwd(), tarball);
console.log(`${manifest.name} ${manifest.version}: ${relative}`);
console.log(`install it with: npm install -g ./${relative}`);
