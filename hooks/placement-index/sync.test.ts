// The kubecell-placement-index hooks over HTTP, with the body Metacontroller v4.17.2 sends to a
// v2 DecoratorController's sync (`{controller, object, attachments, related, finalizing}`,
// pkg/controller/decorator/api/v2/hooks.go; hooks/metacontroller/__fixtures__ holds one
// verbatim): every Cell of the controller namespace as a placement reads it, in one attachment.
import { expect } from 'chai';
import request from 'supertest';
import { gzipSync } from 'node:zlib';
import type { ConfigMapObject } from '../api/cell-liveness-record.js';
import {
  PLACEMENT_INDEX_KEY,
  PLACEMENT_INDEX_NAME,
  PLACEMENT_INDEX_SOURCE_LABEL,
  PLACEMENT_INDEX_SOURCE_NAME,
  readPlacementIndex,
} from '../api/placement-index.js';
import { productApp } from '../controllers/testing.js';
import { copy, readyCell } from '../feasibility/testing.js';
import type { Cell } from '../generated/types/index.js';
import {
  decoratorHookBody,
  loadFixture,
  type DecoratorHookBody,
} from '../metacontroller/testing.js';
import { toObjectMap, type ObjectMap } from '../metacontroller/protocol.js';

const NOW = new Date('2026-12-07T12:00:00Z');
const NAMESPACE = 'kubecell-system';

function controller(): Record<string, unknown> {
  const fixture = loadFixture<DecoratorHookBody>('decorator-sync-related-v2').controller;
  return { ...fixture, metadata: { name: 'kubecell-placement-index' } };
}

function source(name = PLACEMENT_INDEX_SOURCE_NAME, namespace = NAMESPACE): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { [PLACEMENT_INDEX_SOURCE_LABEL]: 'true' } },
  };
}

function cellNamed(name: string, labels: Record<string, string>): Cell {
  const cell = copy(readyCell());
  cell.metadata = { ...cell.metadata, name, namespace: NAMESPACE, labels };
  return cell;
}

const CELLS = [
  cellNamed('gpu-b', { tier: 'gpu' }),
  cellNamed('gpu-a', { tier: 'gpu', zone: 'one' }),
];

async function sync(
  object: ConfigMapObject,
  options: { attachments?: ObjectMap; related?: ObjectMap } = {},
): Promise<{ attachments: ConfigMapObject[] } & Record<string, unknown>> {
  const { app } = await productApp(NOW, { KUBECELL_CONTROLLER_NAMESPACE: NAMESPACE });
  const response = await request(app)
    .post('/hooks/placement-index/sync')
    .send(decoratorHookBody(controller(), object, options))
    .expect(200);
  return response.body;
}

describe('placement-index hooks over HTTP (D50)', () => {
  before(async function () {
    this.timeout(60_000);
    await productApp(NOW);
  });

  it('relates every Cell of the controller namespace', async () => {
    const { app } = await productApp(NOW, { KUBECELL_CONTROLLER_NAMESPACE: NAMESPACE });
    const response = await request(app)
      .post('/hooks/placement-index/customize')
      .send({ controller: controller(), parent: source() })
      .expect(200);
    expect(response.body).to.deep.equal({
      relatedResources: [
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'cells', namespace: NAMESPACE },
      ],
    });
  });

  it('attaches one index holding every Cell, which reads back as those Cells (without their per-Node lists)', async () => {
    const answer = await sync(source(), { related: toObjectMap(CELLS) });
    expect(Object.keys(answer).sort()).to.deep.equal(['attachments']);
    expect(answer.attachments).to.have.length(1);
    const index = answer.attachments[0]!;
    expect(index.metadata).to.deep.equal({
      name: PLACEMENT_INDEX_NAME,
      namespace: NAMESPACE,
      labels: { 'app.kubernetes.io/part-of': 'kubecell' },
    });
    const read = readPlacementIndex(index, NAMESPACE);
    if ('invalid' in read) throw new Error(read.invalid);
    expect(read.unreadable).to.deep.equal([]);
    expect(read.cells.map((cell) => cell.metadata.name)).to.deep.equal(['gpu-a', 'gpu-b']);
    const [first] = read.cells;
    expect(first?.metadata.labels).to.deep.equal({ tier: 'gpu', zone: 'one' });
    expect(first?.spec).to.deep.equal(CELLS[1]?.spec);
    expect(first?.status?.inventory).to.deep.equal(
      Object.fromEntries(
        Object.entries(CELLS[1]?.status?.inventory ?? {}).map(([resource, figures]) => {
          const kept = { ...figures };
          delete kept.capacity;
          return [resource, kept];
        }),
      ),
    );
    expect(first?.status?.nodes).to.equal(undefined);
  });

  it('gives the same bytes for the same Cells in any order, so Metacontroller writes nothing new', async () => {
    const forward = await sync(source(), { related: toObjectMap(CELLS) });
    const backward = await sync(source(), { related: toObjectMap([...CELLS].reverse()) });
    expect(JSON.stringify(backward)).to.equal(JSON.stringify(forward));
  });

  it('keeps the index it has while the Cells are not observed', async () => {
    const written = (await sync(source(), { related: toObjectMap(CELLS) })).attachments[0]!;
    const answer = await sync(source(), { attachments: toObjectMap([written]), related: {} });
    expect(answer.attachments).to.deep.equal([written]);
  });

  it('writes an empty index when no Cell exists', async () => {
    const related = { [`Cell.kubecell.io/v1alpha1`]: {} };
    const answer = await sync(source(), { related });
    const read = readPlacementIndex(answer.attachments[0]!, NAMESPACE);
    expect(read).to.deep.equal({ cells: [], unreadable: [] });
  });

  it('makes no index from another ConfigMap carrying the label, and relates nothing for it', async () => {
    for (const other of [source('copied'), source(PLACEMENT_INDEX_SOURCE_NAME, 'elsewhere')]) {
      expect(await sync(other, { related: toObjectMap(CELLS) })).to.deep.equal({ attachments: [] });
    }
  });

  it('answers 400 naming the field for a related Cell that breaks its schema', async () => {
    const { app } = await productApp(NOW, { KUBECELL_CONTROLLER_NAMESPACE: NAMESPACE });
    const broken = copy(CELLS[0]!) as unknown as { spec: Record<string, unknown> };
    broken.spec = { ...broken.spec, machineProfile: 7 };
    const response = await request(app)
      .post('/hooks/placement-index/sync')
      .send(
        decoratorHookBody(controller(), source(), {
          related: toObjectMap([broken as unknown as Cell]),
        }),
      )
      .expect(400);
    expect(JSON.stringify(response.body)).to.match(/spec\.machineProfile/);
  });
});

describe('reading the placement index (untrusted bytes)', () => {
  function indexHolding(encoded: string): ConfigMapObject {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: PLACEMENT_INDEX_NAME, namespace: NAMESPACE },
      binaryData: { [PLACEMENT_INDEX_KEY]: encoded },
    };
  }

  it('refuses an index that expands past its bound, unread', () => {
    const bomb = gzipSync(Buffer.alloc(9 * 1024 * 1024, 32)).toString('base64');
    expect(readPlacementIndex(indexHolding(bomb), NAMESPACE)).to.deep.equal({
      invalid: `binaryData.${PLACEMENT_INDEX_KEY} expands to more than 8388608 bytes`,
    });
  });

  it('names what is wrong: missing key, not JSON, not a list of cells', () => {
    const missing = indexHolding('');
    delete missing.binaryData;
    expect(readPlacementIndex(missing, NAMESPACE)).to.deep.equal({
      invalid: `binaryData.${PLACEMENT_INDEX_KEY} is missing`,
    });
    expect(
      readPlacementIndex(indexHolding(gzipSync('{').toString('base64')), NAMESPACE),
    ).to.deep.equal({
      invalid: `binaryData.${PLACEMENT_INDEX_KEY} does not hold JSON`,
    });
    expect(
      readPlacementIndex(indexHolding(gzipSync('{"cells":{}}').toString('base64')), NAMESPACE),
    ).to.deep.equal({
      invalid: `binaryData.${PLACEMENT_INDEX_KEY} is not an object with a list "cells"`,
    });
  });

  it('names the field and what is wrong, never bytes written into the ConfigMap', () => {
    const injected = 'INJECTED\u2028proxy-url: http://evil.example';
    const text = JSON.stringify({
      cells: [
        { name: 'gpu-a', spec: { ...CELLS[0]!.spec, machineProfile: injected } },
        { name: injected, spec: CELLS[0]!.spec },
        { name: 'gpu-c', spec: CELLS[0]!.spec, [injected]: 1 },
        { name: 'gpu-d', spec: CELLS[0]!.spec, status: { inventory: { [injected]: [] } } },
        { name: 'gpu-e', spec: CELLS[0]!.spec, labels: { zone: injected } },
        { name: 'gpu-f', spec: CELLS[0]!.spec, labels: { [injected]: 'a' } },
      ],
    });
    const read = readPlacementIndex(indexHolding(gzipSync(text).toString('base64')), NAMESPACE);
    if ('invalid' in read) throw new Error(read.invalid);
    expect(read.unreadable.map((entry) => entry.entry)).to.deep.equal([
      'gpu-a',
      'cells[1]',
      'gpu-c',
      'gpu-d',
      'gpu-e',
      'gpu-f',
    ]);
    expect(read.unreadable[0]?.problem).to.equal('spec.machineProfile: Invalid value');
    expect(JSON.stringify(read.unreadable)).to.not.contain('INJECTED');
    expect(JSON.stringify(read.unreadable)).to.not.contain('evil');
  });

  it('refuses an entry per problem, by name: a second entry for a Cell, an unknown field, bad figures', () => {
    const entry = { name: 'gpu-a', spec: CELLS[0]!.spec };
    const text = JSON.stringify({
      cells: [
        entry,
        entry,
        { ...entry, name: 'gpu-b', extra: 1 },
        { ...entry, name: 'gpu-c', status: { inventory: { cpu: ['1'] } } },
        'x',
      ],
    });
    const read = readPlacementIndex(indexHolding(gzipSync(text).toString('base64')), NAMESPACE);
    if ('invalid' in read) throw new Error(read.invalid);
    expect(read.cells.map((cell) => cell.metadata.name)).to.deep.equal(['gpu-a']);
    expect(read.unreadable).to.deep.equal([
      { entry: 'gpu-a', problem: 'a second entry for the same Cell', labels: {} },
      { entry: 'gpu-b', problem: 'unknown field extra', labels: {} },
      {
        entry: 'gpu-c',
        problem:
          'status.inventory[cpu] is not a list of 5 figures (allocatable, requested, pending, committed, availableEstimate)',
        labels: {},
      },
      { entry: 'cells[4]', problem: 'not an object' },
    ]);
  });
});
