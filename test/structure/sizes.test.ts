/**
 * Small pieces: a function a reader takes in at once (about 60 lines), a module of one concept
 * (about 400 lines). An exception is listed here with its reason, and in
 * docs/design/decisions.md (D32).
 */
import { expect } from 'chai';
import { functionLengths, moduleLines } from './code-size.js';
import { shippedModules } from './source-files.js';

const MAX_FUNCTION_LINES = 60;
const MAX_MODULE_LINES = 400;

/** Functions allowed to be longer, by `module name` (no line number: it moves). */
const LONG_FUNCTIONS: Record<string, string> = {};
/** Modules allowed to be longer. */
const LONG_MODULES: Record<string, string> = {};

describe(`sizes: functions ≤ ${MAX_FUNCTION_LINES} lines, modules ≤ ${MAX_MODULE_LINES} (hooks/)`, () => {
  const modules = shippedModules();

  it('has no longer function, except those the decision record explains', () => {
    const long = modules
      .flatMap(functionLengths)
      .filter(({ where, lines }) => {
        const name = where.replace(/:\d+ /, ' ');
        return lines > MAX_FUNCTION_LINES && LONG_FUNCTIONS[name] === undefined;
      })
      .map(({ where, lines }) => `${where}: ${lines} lines`);
    expect(long).to.deep.equal([]);
  });

  it('has no longer module, except those the decision record explains', () => {
    const long = modules
      .filter((module) => LONG_MODULES[module] === undefined)
      .map((module) => ({ module, lines: moduleLines(module) }))
      .filter(({ lines }) => lines > MAX_MODULE_LINES)
      .map(({ module, lines }) => `${module}: ${lines} lines`);
    expect(long).to.deep.equal([]);
  });

  it('measures what it claims to (a known function and module)', () => {
    const lengths = functionLengths('hooks/status/conditions.ts');
    const reconcile = lengths.find(({ where }) => where.endsWith(' reconcileConditions'));
    expect(reconcile?.lines).to.be.within(15, 40);
    expect(moduleLines('hooks/status/conditions.ts')).to.be.within(40, 120);
  });
});
