/**
 * The input of `kubecell validate`: files, directories (recursively: *.yaml, *.yml, *.json) or
 * standard input, each holding any number of YAML or JSON documents, a List's items counting
 * as documents of their own.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isJsonObject } from '../json/json.js';
import { UsageError, type CliIo } from './io.js';

/** One object of the input, and the file it came from (`<stdin>` for standard input). */
export interface Document {
  file: string;
  object: Record<string, unknown>;
}

export interface Manifests {
  documents: Document[];
  /** Documents that are not valid YAML, one line each. */
  problems: string[];
  fileCount: number;
}

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

/**
 * Every object of every file under `paths` ("-" is standard input); a usage error when a path
 * cannot be read.
 */
export async function readManifests(paths: readonly string[], io: CliIo): Promise<Manifests> {
  const manifests: Manifests = { documents: [], problems: [], fileCount: 0 };
  for (const path of paths) {
    for (const file of path === '-' ? ['-'] : await filesOf(path)) {
      manifests.fileCount++;
      const label = file === '-' ? '<stdin>' : file;
      const text =
        file === '-' ? await readAll(io.stdin ?? process.stdin) : await readFile(file, 'utf8');
      addDocuments(manifests, label, text);
    }
  }
  return manifests;
}

function addDocuments(manifests: Manifests, label: string, text: string): void {
  parseAllDocuments(text).forEach((doc, index) => {
    const error = doc.errors[0];
    if (error) {
      manifests.problems.push(
        `${label}: document ${index + 1}: invalid YAML: ${error.message.split('\n')[0]}`,
      );
      return;
    }
    for (const object of objectsOf(doc.toJS())) manifests.documents.push({ file: label, object });
  });
}

/** The files under `path`: itself if a file, else every manifest below it, sorted. */
async function filesOf(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw new UsageError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (!info.isDirectory()) return [path];
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  const files: string[] = [];
  for (const entry of entries) {
    const child = join(path, entry.name);
    if (entry.isDirectory() || (entry.isSymbolicLink() && (await stat(child)).isDirectory())) {
      files.push(...(await filesOf(child)));
    } else if (MANIFEST_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) {
      files.push(child);
    }
  }
  return files;
}

async function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

/** Objects of a document: itself, or the items of a List. */
function objectsOf(value: unknown): Record<string, unknown>[] {
  if (!isJsonObject(value)) return [];
  if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
    return value.items.filter(isJsonObject);
  }
  return [value];
}
