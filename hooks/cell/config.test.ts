import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { DEFAULT_CELL_CONFIG } from './config.js';

describe('Cell controller settings', () => {
  it('resyncSeconds is the resyncPeriodSeconds metacontroller/cell.yaml gives Metacontroller', () => {
    // The hook asks for a resync only when it is due before the period brings one.
    const controller = parse(
      readFileSync(new URL('../../metacontroller/cell.yaml', import.meta.url), 'utf8'),
    ) as { spec: { resyncPeriodSeconds?: number } };
    expect(controller.spec.resyncPeriodSeconds).to.equal(DEFAULT_CELL_CONFIG.resyncSeconds);
  });
});
