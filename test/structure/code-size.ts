/** Lengths of the functions and modules of a TypeScript source, read with the compiler's parser. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './source-files.js';

export interface FunctionLength {
  /** `hooks/cell/status.ts:165 computeCellStatus` */
  where: string;
  lines: number;
}

function nameOf(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) {
    return node.name.getText();
  }
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) {
    return parent.name.getText();
  }
  return '(anonymous)';
}

function isFunction(node: ts.Node): boolean {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node)
  );
}

/** Every function of `module` (nested ones too), with its length in lines, first line to last. */
export function functionLengths(module: string): FunctionLength[] {
  const text = readFileSync(path.join(REPO_ROOT, module), 'utf8');
  const source = ts.createSourceFile(module, text, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      found.push({ where: `${module}:${first} ${nameOf(node)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function moduleLines(module: string): number {
  return readFileSync(path.join(REPO_ROOT, module), 'utf8').split('\n').length;
}
