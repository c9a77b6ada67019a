/**
 * Snapshot tests of rendered YAML (cdk8s style): a change to a rendered object shows up as a
 * diff of a committed file in review. UPDATE_SNAPSHOTS=1 rewrites the files instead of comparing;
 * review the diff before committing it.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

/** The YAML of a list of objects, one document each. */
export function objectsYaml(objects: readonly unknown[]): string {
  return objects
    .map((object) => stringify(object, { lineWidth: 0, singleQuote: true }))
    .join('---\n');
}

/** A comparer for `__snapshots__/<name>.yaml` beside the test module at `moduleUrl`. */
export function snapshotsBeside(moduleUrl: string): (name: string, text: string) => void {
  const directory = path.join(path.dirname(fileURLToPath(moduleUrl)), '__snapshots__');
  return (name, text) => {
    const file = path.join(directory, `${name}.yaml`);
    if (process.env['UPDATE_SNAPSHOTS'] === '1') {
      mkdirSync(directory, { recursive: true });
      writeFileSync(file, text);
      return;
    }
    if (!existsSync(file)) {
      throw new Error(`snapshot ${file} is missing; run with UPDATE_SNAPSHOTS=1 to write it`);
    }
    expect(text, `${file} differs; run with UPDATE_SNAPSHOTS=1 if the change is intended`).to.equal(
      readFileSync(file, 'utf8'),
    );
  };
}
