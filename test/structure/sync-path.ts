/**
 * The path a reader walks following a sync's request through hooks/ (issue 27, item 1), counted
 * with the TypeScript compiler API so that the figures can be reproduced on any commit.
 *
 * The rule (calibrated against the figures issue 27 counted by hand; see sync-path.test.ts):
 * - Start at the sync function with its first parameter, the request, tainted. A name is derived
 *   from the request when it is bound to an expression that mentions a tainted name: a variable's
 *   initializer (destructured names too), a plain assignment, the variable of a `for … of`/`in`
 *   over one, the parameter of a function that receives a tainted argument, the parameter of a
 *   closure given to a call whose callee or other arguments mention one (`tainted.map((x) =>
 *   …)`). Taint is by symbol, for the whole walk.
 * - A call passes the request on to a function of the sync's own folder when an argument, or the
 *   object it is called on (`assessment.placement.render()`), mentions a tainted name; to a
 *   function of another folder only when that argument is an object (not a string, number or
 *   boolean: `compareStrings(a.name, b.name)` does not carry the request, `feedbackValue(work,
 *   …)` does).
 * - Callees are resolved to their bodies: imports followed to the declaration, a method of an
 *   object literal or class to its body, a method of an interface to every object literal in
 *   hooks/ whose contextual type declares it (each a stop of its own: `placement.render()` reaches
 *   both placements), a function passed by name to a call that passes the request on
 *   (`items.map(render)`) when it takes an object or is of the sync's folder. Only functions of
 *   shipped modules count (not tests, testing.ts or generated code) and none of the basics, the
 *   layers below kube/remote in LAYERS (generated, json, memo, quantity, config, status,
 *   metacontroller, validation): they are the vocabulary, not a step.
 * - Walk depth-first in evaluation order: statements in source order, the callee and the
 *   arguments of a call before the call; a closure given to a call where it is written, any
 *   other nested function (a local, a method of a returned object) when it is called. A call
 *   site is taken once in the whole walk; a function already on the stack is not entered again.
 * - A stop is a call that passes the request on into another module. A call within the module is
 *   read through without a stop (the reader stays in the file). A function of the sync's folder is
 *   entered; one of another folder is a stop the walk does not go into (its folder's business,
 *   behind the function it exports).
 * - The path: the sync's module, then the module of every stop, in walk order. Modules: the
 *   distinct files on it. A return: a step of the path into a module other than the current one
 *   that the path had already left.
 * - A climb: a stop into a module of a higher layer (LAYERS in layers.test.ts), or, within one
 *   folder, into a module of an earlier phase. A reach ahead: within one folder, a stop into a
 *   later phase (issue 27: "no phase calls into a later phase's module"). A module's phase comes
 *   from the dash-separated words of its file name: observe; assess, resolve, placement; render,
 *   children; status, conditions; publish, publication (the earliest if several). A module with
 *   none (sync.ts, names.ts, kubeconfig.ts, …) has no phase and is not judged by it.
 *
 * Run `npx tsx test/structure/sync-path.ts [--root DIR] [virtualcluster|cell|delivery|
 * hooks/x/sync.ts#syncX …]` to print each path (a return marked ↩) and its figures; --root reads
 * another checkout, e.g. a detached worktree of an older commit.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface SyncTarget {
  /** The module of the sync function, relative to the root (`hooks/cell/sync.ts`). */
  module: string;
  fn: string;
}

export const SYNCS = {
  virtualcluster: { module: 'hooks/virtualcluster/sync.ts', fn: 'syncVirtualCluster' },
  cell: { module: 'hooks/cell/sync.ts', fn: 'syncCell' },
  delivery: { module: 'hooks/delivery/sync.ts', fn: 'syncDelivery' },
} as const satisfies Record<string, SyncTarget>;

/** A call that passes the request on into a hooks/ function. */
export interface Stop {
  /** The module of the call site and the function it is written in. */
  from: string;
  caller: string;
  /** `hooks/cell/assess.ts:42` */
  site: string;
  /** The module of the function called, and its name. */
  module: string;
  callee: string;
  depth: number;
}

export interface JudgedStop extends Stop {
  why: string;
}

export interface SyncPath {
  target: SyncTarget;
  stops: Stop[];
  /** The start module, then the module of every stop. */
  path: string[];
  modules: string[];
  /** How many times each module was returned to (modules never returned to left out). */
  returnsTo: Record<string, number>;
  returns: number;
  climbs: JudgedStop[];
  /** Stops into a later phase of the same folder. */
  aheads: JudgedStop[];
}

type FunctionNode = ts.FunctionLikeDeclaration & { body: ts.Node };

interface Target {
  fn: FunctionNode;
  /** Which parameters receive something derived from the request; 'all' for a callback. */
  tainted: boolean[] | 'all';
}

const PHASE_WORDS: Record<string, number> = {
  observe: 0,
  assess: 1,
  resolve: 1,
  placement: 1,
  render: 2,
  children: 2,
  status: 3,
  conditions: 3,
  publish: 4,
  publication: 4,
};
const PHASE_NAMES = ['observe', 'assess', 'render', 'status', 'publish'];

/** The phase a module's file name puts it in, or undefined. */
export function phaseOf(module: string): number | undefined {
  const words = path.posix.basename(module, '.ts').split('-');
  const phases = words.flatMap((word) => PHASE_WORDS[word] ?? []);
  return phases.length === 0 ? undefined : Math.min(...phases);
}

function folderOf(module: string): string {
  const parts = module.split('/');
  return parts.length > 2 ? (parts[1] as string) : 'main';
}

function layerOf(layers: string[][], module: string): number {
  return layers.findIndex((names) => names.includes(folderOf(module)));
}

/** LAYERS as written in `<root>/test/structure/layers.test.ts`, read without running it. */
export function readLayers(root: string): string[][] {
  const file = path.join(root, 'test/structure/layers.test.ts');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  let layers: string[][] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'LAYERS') {
      const list = node.initializer;
      if (list && ts.isArrayLiteralExpression(list)) {
        layers = list.elements.map((layer) =>
          ts.isArrayLiteralExpression(layer)
            ? layer.elements.flatMap((name) => (ts.isStringLiteral(name) ? name.text : []))
            : [],
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return layers;
}

/** A TypeScript program over the sync modules of a checkout, and the layers it declares. */
export interface Project {
  root: string;
  program: ts.Program;
  checker: ts.TypeChecker;
  layers: string[][];
}

export function openProject(
  root: string,
  modules: readonly string[] = Object.values(SYNCS).map((sync) => sync.module),
): Project {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    noEmit: true,
    // The language's own library without the DOM's: half the time, the same answers.
    lib: ['lib.es2022.d.ts'],
    types: [],
  };
  const program = ts.createProgram(
    modules.map((module) => path.join(root, module)),
    options,
  );
  return { root, program, checker: program.getTypeChecker(), layers: readLayers(root) };
}

function isFunctionNode(node: ts.Node | undefined): node is FunctionNode {
  return (
    node !== undefined &&
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node)) &&
    node.body !== undefined
  );
}

/** Walks one sync; see the rule at the top of this file. */
class Walker {
  private readonly tainted = new Set<ts.Symbol>();
  private readonly counted = new Set<ts.Node>();
  private readonly stack: FunctionNode[] = [];
  private readonly implementations = new Map<ts.Node, FunctionNode[]>();
  readonly stops: Stop[] = [];

  /**
   * @param folder the sync's folder (`hooks/cell/`): its functions are entered, any other is a
   *   stop the walk does not go into
   * @param basics the layers below this one are the basics: calls into them are not followed
   */
  constructor(
    private readonly project: Project,
    private readonly folder: string,
    private readonly basics: number,
  ) {}

  private get checker(): ts.TypeChecker {
    return this.project.checker;
  }

  /** The module of a node relative to the root, or undefined outside shipped hooks/ code. */
  moduleOf(node: ts.Node): string | undefined {
    const relative = path.relative(this.project.root, node.getSourceFile().fileName);
    const module = relative.split(path.sep).join('/');
    const shipped =
      module.startsWith('hooks/') &&
      module.endsWith('.ts') &&
      !module.endsWith('.test.ts') &&
      !module.endsWith('.d.ts') &&
      path.posix.basename(module) !== 'testing.ts' &&
      !module.startsWith('hooks/generated/');
    return shipped ? module : undefined;
  }

  nameOf(fn: ts.Node): string {
    const named = fn as ts.Node & { name?: ts.Node };
    if (named.name !== undefined && !ts.isFunctionExpression(fn)) return named.name.getText();
    const parent = fn.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) {
      return parent.name.getText();
    }
    let outer = parent;
    while (!ts.isSourceFile(outer) && !isFunctionNode(outer)) outer = outer.parent;
    return ts.isSourceFile(outer) ? '(anonymous)' : `(closure in ${this.nameOf(outer)})`;
  }

  private symbolOf(node: ts.Node): ts.Symbol | undefined {
    const symbol = this.checker.getSymbolAtLocation(node);
    if (symbol === undefined) return undefined;
    return symbol.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(symbol) : symbol;
  }

  /** Whether an expression mentions a name derived from the request. */
  private mentions(node: ts.Node | undefined): boolean {
    if (node === undefined) return false;
    if (ts.isIdentifier(node)) {
      const parent = node.parent;
      const symbol = ts.isShorthandPropertyAssignment(parent)
        ? this.checker.getShorthandAssignmentValueSymbol(parent)
        : this.checker.getSymbolAtLocation(node);
      if (symbol !== undefined && this.tainted.has(symbol)) return true;
    }
    return ts.forEachChild(node, (child) => this.mentions(child) || undefined) === true;
  }

  /**
   * Whether an expression passes the request on to a function of `inside` (the sync's folder) or
   * not: it mentions a tainted name and, outside the folder, is not a scalar.
   */
  private carries(node: ts.Expression | undefined, inside: boolean): boolean {
    if (node === undefined || !this.mentions(node)) return false;
    return inside || !isScalar(this.checker.getTypeAtLocation(node));
  }

  /** Whether a function has a parameter that is not a scalar. */
  private takesObject(fn: FunctionNode): boolean {
    return fn.parameters.some(
      (parameter) => !isScalar(this.checker.getTypeAtLocation(parameter.name)),
    );
  }

  private taintBinding(name: ts.Node): void {
    if (ts.isIdentifier(name)) {
      const symbol = this.checker.getSymbolAtLocation(name);
      if (symbol !== undefined) this.tainted.add(symbol);
      return;
    }
    ts.forEachChild(name, (child) => {
      if (ts.isBindingElement(child)) this.taintBinding(child.name);
      else if (ts.isArrayBindingPattern(child) || ts.isObjectBindingPattern(child)) {
        this.taintBinding(child);
      } else if (ts.isIdentifier(child) && ts.isArrayLiteralExpression(name)) {
        this.taintBinding(child);
      }
    });
  }

  enter(target: Target, depth: number): void {
    const { fn, tainted } = target;
    fn.parameters.forEach((parameter, index) => {
      if (tainted === 'all' || tainted[index] === true) this.taintBinding(parameter.name);
    });
    this.stack.push(fn);
    this.visit(fn.body, depth);
    this.stack.pop();
  }

  private visit(node: ts.Node, depth: number): void {
    if (ts.isVariableDeclaration(node)) {
      if (node.initializer) this.visit(node.initializer, depth);
      if (this.mentions(node.initializer)) this.taintBinding(node.name);
    } else if (ts.isForOfStatement(node) || ts.isForInStatement(node)) {
      this.visit(node.expression, depth);
      const declarations = node.initializer;
      if (this.mentions(node.expression)) {
        if (ts.isVariableDeclarationList(declarations)) {
          declarations.declarations.forEach((declaration) => this.taintBinding(declaration.name));
        } else this.taintBinding(declarations);
      }
      this.visit(node.statement, depth);
    } else if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken
    ) {
      this.visit(node.right, depth);
      if (this.mentions(node.right)) this.taintBinding(node.left);
    } else if (isFunctionNode(node)) {
      // A closure given to a call runs there (`tainted.map((x) => …)`): it is read in place, its
      // parameters tainted when the call mentions a tainted name. Any other nested function (a
      // local, a method of a returned object) is read when it is called.
      const call = node.parent;
      if (!ts.isCallExpression(call) || !call.arguments.some((argument) => argument === node)) {
        return;
      }
      const others = call.arguments.filter((argument) => argument !== node);
      if ([call.expression, ...others].some((part) => this.mentions(part))) {
        node.parameters.forEach((parameter) => this.taintBinding(parameter.name));
      }
      this.stack.push(node);
      this.visit(node.body, depth);
      this.stack.pop();
    } else if (ts.isCallExpression(node)) {
      this.visit(node.expression, depth);
      node.arguments.forEach((argument) => this.visit(argument, depth));
      this.call(node, depth);
    } else {
      ts.forEachChild(node, (child) => this.visit(child, depth));
    }
  }

  private call(call: ts.CallExpression, depth: number): void {
    if (this.counted.has(call)) return;
    const callee = skipOuter(call.expression);
    const receiver = ts.isPropertyAccessExpression(callee) ? callee.expression : undefined;
    const targets: Target[] = this.resolve(callee).flatMap((fn) => {
      const inside = this.inFolder(fn);
      const tainted = call.arguments.map((argument) => this.carries(argument, inside));
      return tainted.includes(true) || this.carries(receiver, inside) ? [{ fn, tainted }] : [];
    });
    // A function of hooks/ passed by name to a call that passes the request on: a callback
    // that receives it (`items.map(render)`), when it takes an object.
    const passesOn = [receiver, ...call.arguments].some((part) => this.carries(part, false));
    if (targets.length > 0 || passesOn) {
      for (const argument of call.arguments) {
        const passed = ts.isIdentifier(argument) ? this.resolve(argument) : [];
        const takers = passed.filter((fn) => this.inFolder(fn) || this.takesObject(fn));
        targets.push(...takers.map((fn): Target => ({ fn, tainted: 'all' })));
      }
    }
    if (targets.length === 0) return;
    this.counted.add(call);
    const from = this.moduleOf(call) as string;
    const line = call.getSourceFile().getLineAndCharacterOfPosition(call.getStart()).line + 1;
    const caller = this.stack.at(-1);
    for (const target of targets) {
      const module = this.moduleOf(target.fn) as string;
      const onStack = this.stack.includes(target.fn);
      if (module === from) {
        // A call within the module is read through, not counted: the reader stays in the file.
        if (!onStack) this.enter(target, depth);
        continue;
      }
      this.stops.push({
        from,
        caller: caller === undefined ? '(top)' : this.nameOf(caller),
        site: `${from}:${line}`,
        module,
        callee: this.nameOf(target.fn),
        depth: depth + 1,
      });
      if (this.inFolder(target.fn) && !onStack) this.enter(target, depth + 1);
    }
  }

  private inFolder(fn: FunctionNode): boolean {
    return this.moduleOf(fn)?.startsWith(this.folder) === true;
  }

  /** The hooks/ function bodies a callee expression reaches. */
  private resolve(callee: ts.Expression): FunctionNode[] {
    const named = ts.isPropertyAccessExpression(callee) ? callee.name : callee;
    const symbol = this.symbolOf(named);
    const found = (symbol?.declarations ?? []).flatMap((declaration) => this.bodies(declaration));
    return found.filter((fn) => {
      const module = this.moduleOf(fn);
      return module !== undefined && layerOf(this.project.layers, module) >= this.basics;
    });
  }

  private bodies(declaration: ts.Declaration): FunctionNode[] {
    if (isFunctionNode(declaration)) return [declaration];
    if (ts.isVariableDeclaration(declaration) || ts.isPropertyAssignment(declaration)) {
      const value = declaration.initializer && skipOuter(declaration.initializer);
      return isFunctionNode(value) ? [value] : [];
    }
    if (ts.isShorthandPropertyAssignment(declaration)) {
      const value = this.checker.getShorthandAssignmentValueSymbol(declaration);
      return (value?.declarations ?? []).flatMap((inner) => this.bodies(inner));
    }
    const signature = ts.isMethodSignature(declaration) || ts.isPropertySignature(declaration);
    if (signature && this.moduleOf(declaration) !== undefined) {
      return this.implementationsOf(declaration);
    }
    return [];
  }

  /** Object literals in hooks/ that implement an interface's method, by contextual type. */
  private implementationsOf(signature: ts.MethodSignature | ts.PropertySignature): FunctionNode[] {
    const cached = this.implementations.get(signature);
    if (cached) return cached;
    const name = signature.name.getText();
    const found: FunctionNode[] = [];
    const visit = (node: ts.Node): void => {
      if (
        (ts.isPropertyAssignment(node) || ts.isMethodDeclaration(node)) &&
        ts.isObjectLiteralExpression(node.parent) &&
        node.name.getText() === name
      ) {
        const type = this.checker.getContextualType(node.parent);
        const property = type && this.checker.getPropertyOfType(type, name);
        if (property?.declarations?.includes(signature)) found.push(...this.bodies(node));
      }
      ts.forEachChild(node, visit);
    };
    for (const file of this.project.program.getSourceFiles()) {
      if (this.moduleOf(file) !== undefined) visit(file);
    }
    this.implementations.set(signature, found);
    return found;
  }
}

const SCALAR =
  ts.TypeFlags.StringLike |
  ts.TypeFlags.NumberLike |
  ts.TypeFlags.BooleanLike |
  ts.TypeFlags.BigIntLike |
  ts.TypeFlags.Undefined |
  ts.TypeFlags.Null |
  ts.TypeFlags.Void;

/** A string, number or boolean (or a union of them, with undefined or null). */
function isScalar(type: ts.Type): boolean {
  return type.isUnion() ? type.types.every(isScalar) : (type.flags & SCALAR) !== 0;
}

function skipOuter(expression: ts.Expression): ts.Expression {
  let inner = expression;
  while (
    ts.isParenthesizedExpression(inner) ||
    ts.isNonNullExpression(inner) ||
    ts.isAsExpression(inner) ||
    ts.isSatisfiesExpression(inner)
  ) {
    inner = inner.expression;
  }
  return inner;
}

function findFunction(project: Project, target: SyncTarget): FunctionNode {
  const file = project.program.getSourceFile(path.join(project.root, target.module));
  let found: FunctionNode | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionDeclaration(node) && node.name?.text === target.fn && isFunctionNode(node)) {
      found = node;
    } else if (
      ts.isVariableDeclaration(node) &&
      node.name.getText() === target.fn &&
      isFunctionNode(node.initializer)
    ) {
      found = node.initializer;
    }
    if (!found) ts.forEachChild(node, visit);
  };
  if (file) visit(file);
  if (!found) throw new Error(`no function ${target.fn} in ${target.module}`);
  return found;
}

/** Returns, climbs and reaches ahead along the stops of a walk. */
function judge(project: Project, target: SyncTarget, stops: Stop[]): SyncPath {
  const sequence = [target.module, ...stops.map((stop) => stop.module)];
  const left = new Set<string>();
  const returnsTo: Record<string, number> = {};
  sequence.forEach((module, index) => {
    const previous = sequence[index - 1];
    if (previous === undefined || previous === module) return;
    if (left.has(module)) returnsTo[module] = (returnsTo[module] ?? 0) + 1;
    left.add(previous);
  });
  const layer = (module: string): number => layerOf(project.layers, module);
  const climbs: JudgedStop[] = [];
  const aheads: JudgedStop[] = [];
  for (const stop of stops) {
    if (stop.from === stop.module) continue;
    const [fromPhase, toPhase] = [phaseOf(stop.from), phaseOf(stop.module)];
    const samePhased = folderOf(stop.from) === folderOf(stop.module) && fromPhase !== undefined;
    if (layer(stop.module) > layer(stop.from)) {
      climbs.push({ ...stop, why: `layer ${layer(stop.from)} → ${layer(stop.module)}` });
    } else if (samePhased && toPhase !== undefined && toPhase < fromPhase) {
      const why = `${PHASE_NAMES[fromPhase]} → ${PHASE_NAMES[toPhase]}`;
      climbs.push({ ...stop, why });
    } else if (samePhased && toPhase !== undefined && toPhase > fromPhase) {
      aheads.push({ ...stop, why: `${PHASE_NAMES[fromPhase]} → ${PHASE_NAMES[toPhase]}` });
    }
  }
  return {
    target,
    stops,
    path: sequence,
    modules: [...new Set(sequence)],
    returnsTo,
    returns: Object.values(returnsTo).reduce((sum, count) => sum + count, 0),
    climbs,
    aheads,
  };
}

/** Follows the request of `target`'s sync function through hooks/. */
export function followSync(project: Project, target: SyncTarget): SyncPath {
  const folder = `${path.posix.dirname(target.module)}/`;
  const basics = layerOf(project.layers, 'hooks/kube/');
  const walker = new Walker(project, folder, basics);
  walker.enter({ fn: findFunction(project, target), tainted: [true] }, 0);
  return judge(project, target, walker.stops);
}

/** The modules returned to more than `max` times, with their counts. */
export function returnedTooOften(sync: SyncPath, max: number): Record<string, number> {
  return Object.fromEntries(Object.entries(sync.returnsTo).filter(([, n]) => n > max));
}

/** `virtualcluster/assess.ts → virtualcluster/render.ts secretPointsAt`: no line, it moves. */
export function stopLabel(stop: Stop): string {
  return `${stop.from.replace(/^hooks\//, '')} → ${stop.module.replace(/^hooks\//, '')} ${stop.callee}`;
}

/** The path, one stop a line (indented by depth, a return marked ↩), and the figures. */
export function describePath(sync: SyncPath): string {
  const short = (module: string) => module.replace(/^hooks\//, '');
  const seen = new Set<string>([sync.target.module]);
  let current = sync.target.module;
  const lines = sync.stops.map((stop) => {
    const mark = stop.module !== current && seen.has(stop.module) ? '↩' : ' ';
    seen.add(stop.module);
    current = stop.module;
    const indent = '  '.repeat(stop.depth);
    return `${mark} ${indent}${short(stop.module)} ${stop.callee}  (${short(stop.site)})`;
  });
  const judged = (list: JudgedStop[]) =>
    list.map(
      (stop) => `    ${short(stop.site)} ${stop.callee} → ${short(stop.module)} (${stop.why})`,
    );
  const entries = Object.entries(sync.returnsTo).map(([module, n]) => `${short(module)} ${n}`);
  const folder = `${path.posix.dirname(sync.target.module)}/`;
  const steps = sync.path.filter((module, index) => module !== sync.path[index - 1]);
  return [
    `${sync.target.fn} (${sync.target.module})`,
    ...lines,
    `  path: ${steps.map((module) => module.replace(folder, '').replace(/^hooks\//, '')).join(' → ')}`,
    `  stops ${sync.stops.length}, modules ${sync.modules.length}, returns ${sync.returns}, ` +
      `climbs ${sync.climbs.length}, reaches ahead ${sync.aheads.length}`,
    `  returned to: ${entries.join(', ') || 'none'}`,
    ...(sync.climbs.length ? ['  climbs:', ...judged(sync.climbs)] : []),
    ...(sync.aheads.length ? ['  reaches ahead:', ...judged(sync.aheads)] : []),
  ].join('\n');
}

function main(argv: string[]): void {
  const rootAt = argv.indexOf('--root');
  const root = path.resolve(rootAt >= 0 ? (argv[rootAt + 1] as string) : process.cwd());
  const names = argv.filter((arg, index) => arg !== '--root' && argv[index - 1] !== '--root');
  const targets = (names.length ? names : Object.keys(SYNCS)).map((name): SyncTarget => {
    if (name in SYNCS) return SYNCS[name as keyof typeof SYNCS];
    const [module, fn] = name.split('#');
    if (!module || !fn) throw new Error(`${name}: a sync name or module#function`);
    return { module, fn };
  });
  const project = openProject(
    root,
    targets.map((target) => target.module),
  );
  for (const target of targets) console.log(`${describePath(followSync(project, target))}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2));
}
