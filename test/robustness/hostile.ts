/**
 * Hostile request bodies: a well-formed body broken at random places with wrong types, huge
 * arrays, deep nesting, odd unicode, missing fields and prototype-pollution keys.
 *
 * Bodies are built as JS values that may hold `Raw` JSON fragments, written out by `encode`:
 * a 20,000-level nesting cannot be built with JSON.stringify (it overflows the stack), and a
 * key named `__proto__` must reach the server as text, not as a prototype.
 */
import fc from 'fast-check';

/** JSON text inserted as is. */
export class Raw {
  constructor(readonly text: string) {}

  /** How fast-check shows it in a counterexample: not the megabytes of a huge one. */
  [fc.toStringMethod](): string {
    return this.text.length <= 80
      ? `Raw(${this.text})`
      : `Raw(${this.text.slice(0, 60)}… ${this.text.length} characters)`;
  }
}

/** JSON.stringify, except that `Raw` fragments are written verbatim. */
export function encode(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map((item) => encode(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).map(
      (key) => `${JSON.stringify(key)}:${encode((value as Record<string, unknown>)[key])}`,
    );
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function deepNesting(depth: number, array: boolean): Raw {
  return new Raw(
    array
      ? '['.repeat(depth) + ']'.repeat(depth)
      : '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth),
  );
}

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\udfff',
    '🧨💥',
    'e\u0301',
    '\u202eevil',
    '\ufeff',
    '../../etc/passwd',
    '${jndi:ldap://x}',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '1e999',
    '-0',
    'NaN',
    'Infinity',
    '9Ei',
    '1e1001',
    '0.0000000001n',
    '99999999999999999999999999',
    'True',
    'Running',
    'kube-system',
  ),
  fc.integer({ min: 1000, max: 200_000 }).map((length) => new Raw(`"${'x'.repeat(length)}"`)),
);

const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, -1, 1e308, -1e308, 2 ** 53 + 1, 5e-324, 65536, 30000, 0.5),
);

const hugeCollection = fc
  .tuple(fc.integer({ min: 1000, max: 30_000 }), fc.integer({ min: 0, max: 3 }))
  .map(([n, shape]) => {
    const items = Array.from({ length: n }, (_, i) => i);
    switch (shape) {
      case 0:
        return new Raw(`[${items.map(() => '{}').join(',')}]`);
      case 1:
        return new Raw(`[${items.map((i) => `"x${i}"`).join(',')}]`);
      case 2:
        return new Raw(`{${items.map((i) => `"k${i}":${i}`).join(',')}}`);
      default:
        return new Raw(
          `{${items
            .map(
              (i) =>
                `"ns/o${i}":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"o${i}","namespace":"ns"},"spec":{"nodeName":"node-a"}}`,
            )
            .join(',')}}`,
        );
    }
  });

const prototypeBombs = fc.constantFrom(
  new Raw('{"__proto__":{"polluted":"yes"}}'),
  new Raw('{"constructor":{"prototype":{"polluted":"yes"}}}'),
  new Raw('{"__proto__":null}'),
  new Raw('{"__proto__":[]}'),
  new Raw('{"prototype":{"polluted":"yes"}}'),
  new Raw('{"toString":"x","valueOf":1,"hasOwnProperty":null}'),
);

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean())
      .map(([depth, array]) => deepNesting(depth, array)),
  },
  { weight: 1, arbitrary: hugeCollection },
  { weight: 2, arbitrary: prototypeBombs },
);

const hostileKey = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '',
    ' ',
    'metadata',
    'status',
    'spec',
    'kind',
    'Pod.v1',
    'Node.v1',
    'Service.v1',
    '💥',
    'a/b/c',
    '/',
  ),
  fc.string({ unit: 'binary', maxLength: 10 }),
);

export interface Mutation {
  op: 'replace' | 'remove' | 'add';
  at: number;
  key: string;
  value: unknown;
}

export const mutations: fc.Arbitrary<Mutation[]> = fc.array(
  fc.record({
    op: fc.constantFrom('replace', 'remove', 'add') as fc.Arbitrary<Mutation['op']>,
    at: fc.nat(),
    key: hostileKey,
    value: hostileValue,
  }),
  { minLength: 1, maxLength: 4 },
);

type Container = Record<string, unknown> | unknown[];
type Place = { parent: Container; key: string | number } | { parent: undefined };

function isContainer(value: unknown): value is Container {
  return value !== null && typeof value === 'object' && !(value instanceof Raw);
}

/** Every place in `root`: the root itself, then each member of each object or array. */
function places(root: unknown): Place[] {
  const found: Place[] = [{ parent: undefined }];
  const stack: Container[] = isContainer(root) ? [root] : [];
  while (stack.length > 0) {
    const container = stack.pop() as Container;
    const keys: (string | number)[] = Array.isArray(container)
      ? container.map((_, i) => i)
      : Object.keys(container);
    for (const key of keys) {
      found.push({ parent: container, key });
      const value = (container as Record<string | number, unknown>)[key];
      if (isContainer(value)) stack.push(value);
    }
  }
  return found;
}

/**
 * A fresh copy of a generated value: fast-check hands out the same `[]` or `{}` instance to many
 * runs, and inserting one instance twice could make a body contain itself. `Raw` is immutable.
 */
function fresh(value: unknown): unknown {
  if (value instanceof Raw || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(fresh);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) define(copy, key, (value as Record<string, unknown>)[key]);
  return copy;
}

function define(target: Container, key: string | number, value: unknown): void {
  // defineProperty: `__proto__` becomes an own key, as JSON.parse would make it.
  Object.defineProperty(target, key, {
    value: fresh(value),
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** Applies the mutations to a copy of `base`; the result may be any value, not just an object. */
export function mutate(base: unknown, list: readonly Mutation[]): unknown {
  let root: unknown = structuredClone(base);
  for (const mutation of list) {
    const all = places(root);
    const place = all[mutation.at % all.length] as Place;
    if (mutation.op === 'add') {
      const target = place.parent === undefined ? root : (place.parent as never)[place.key];
      if (isContainer(target) && !Array.isArray(target))
        define(target, mutation.key, mutation.value);
      else if (Array.isArray(target)) target.push(fresh(mutation.value));
      continue;
    }
    if (place.parent === undefined) {
      root = mutation.op === 'replace' ? fresh(mutation.value) : undefined;
      continue;
    }
    if (mutation.op === 'replace') define(place.parent, place.key, mutation.value);
    else if (Array.isArray(place.parent)) place.parent.splice(place.key as number, 1);
    else delete place.parent[place.key as string];
  }
  return root;
}

/** Bodies that are not JSON objects, or not JSON at all, as raw bytes. */
export function rawBodies(valid: string): Array<{ name: string; body: string | Buffer }> {
  return [
    { name: 'empty', body: '' },
    { name: 'null', body: 'null' },
    { name: 'array', body: '[]' },
    { name: 'string', body: '"sync"' },
    { name: 'number', body: '1e999' },
    { name: 'unclosed object', body: '{' },
    { name: 'truncated body', body: valid.slice(0, Math.floor(valid.length / 2)) },
    { name: 'trailing garbage', body: `${valid}}` },
    { name: 'byte order mark', body: `\ufeff${valid}` },
    { name: 'invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) },
    { name: 'NUL bytes', body: Buffer.alloc(64) },
    { name: '100,000 nested arrays', body: deepNesting(100_000, true).text },
    { name: '100,000 nested objects', body: deepNesting(100_000, false).text },
    { name: '__proto__ at the top', body: '{"__proto__":{"polluted":"yes"},"parent":{}}' },
    {
      name: 'constructor.prototype at the top',
      body: '{"constructor":{"prototype":{"polluted":"yes"}}}',
    },
    { name: 'duplicate keys', body: `{"parent":1,${valid.slice(1)}` },
    { name: 'a huge number', body: `{"finalizing":${'9'.repeat(100_000)}}` },
  ];
}
