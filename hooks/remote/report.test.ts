import { expect } from 'chai';
import {
  CellReportError,
  parseCellReport,
  sameReportContent,
  serializeCellReport,
  type CellReport,
} from './report.js';
import { sampleReport } from './testing.js';

/** The same value with every object's keys in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, child]) => [key, reversedKeys(child)]),
  );
}

function problemsOf(text: string): string[] {
  try {
    parseCellReport(text);
  } catch (error) {
    expect(error).to.be.instanceOf(CellReportError);
    return (error as CellReportError).problems;
  }
  throw new Error('expected a CellReportError');
}

describe('the cell agent report (hooks/remote/report.ts)', () => {
  it('parses what it serialises', () => {
    const report = sampleReport();
    expect(parseCellReport(serializeCellReport(report))).to.deep.equal(report);
  });

  it('serialises stably: the same report in any key order is the same bytes', () => {
    const report = sampleReport();
    const shuffled = reversedKeys(report) as CellReport;
    expect(serializeCellReport(shuffled)).to.equal(serializeCellReport(report));
    expect(serializeCellReport(report)).to.match(/^\{"machineProfile":"a100","nodeAddresses":/);
    expect(serializeCellReport(report)).not.to.match(/\s/);
  });

  it('tells a changed report from one only observed again', () => {
    const again = { ...sampleReport(), observedAt: '2026-12-01T12:05:00Z' };
    expect(sameReportContent(sampleReport(), again)).to.equal(true);
    const changed = sampleReport();
    changed.nodePorts.allocated = 4;
    expect(sameReportContent(sampleReport(), changed)).to.equal(false);
  });

  it('names each bad field', () => {
    const bad = JSON.parse(serializeCellReport(sampleReport())) as Record<string, unknown>;
    delete bad['provider'];
    bad['extra'] = 1;
    (bad['nodeCount'] as Record<string, unknown>)['ready'] = 'one';
    (bad['resources'] as Record<string, Record<string, unknown>>)['nvidia.com/gpu']!['capacity'] =
      'eight';
    bad['observedAt'] = 'yesterday';
    expect(problemsOf(JSON.stringify(bad)).sort()).to.deep.equal([
      'report.nodeCount.ready: must be integer, got string',
      'report.observedAt: must be an RFC 3339 time',
      'report.provider: is required',
      'report.resources["nvidia.com/gpu"].capacity: must be a quantity such as 4, 500m or 16Gi',
      'report["extra"]: is not a report field',
    ]);
  });

  it('refuses text that is not a JSON object, or a report of another version', () => {
    expect(problemsOf('{"version":')).to.deep.equal(['report: not JSON (11 characters)']);
    expect(problemsOf('[]')).to.deep.equal(['report: must be an object, got array']);
    const v2 = { ...sampleReport(), version: 2 };
    expect(problemsOf(JSON.stringify(v2))).to.deep.equal([
      'report.version: must be equal to constant',
    ]);
  });

  it('bounds the lists as the Cell status does (at most 16 not-Ready Nodes)', () => {
    const report = sampleReport();
    report.notReadyNodes = Array.from({ length: 17 }, (_, i) => ({ name: `n${i}` }));
    expect(problemsOf(JSON.stringify(report))).to.deep.equal([
      'report.notReadyNodes: must NOT have more than 16 items',
    ]);
  });
});
