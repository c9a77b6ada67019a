import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_DIRS, renderAll, writeAll } from './codegen/generate-all.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = await renderAll(repoRoot);
// Start generated folders empty so a kind removed from schemas/ leaves nothing behind.
for (const dir of GENERATED_DIRS)
  rmSync(path.join(repoRoot, dir), { recursive: true, force: true });
writeAll(repoRoot, files);
console.log(`generated ${files.size} files from schemas/`);
