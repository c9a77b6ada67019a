/**
 * results.md's table of Metacontroller's requests per VirtualCluster from the audit log
 * (bench/report-audit.ts): one row per request, one column per flag set and wave, most first;
 * and results.json entries from before the audit log render as before, without it.
 */
import { expect } from 'chai';
import { perEach, type AuditCounts } from '../../bench/audit-log.js';
import type { MetacontrollerResult, WaveResult } from '../../bench/metacontroller.js';
import { auditMarkdown } from '../../bench/report-audit.js';
import { readResults, renderMarkdown } from '../../bench/results-file.js';

const TITLE = "Metacontroller's API requests per VirtualCluster, from the apiserver's audit log";

/**
 * The committed results.json's metacontroller part as a run from before the audit log recorded
 * it: the audit fields taken out, whether or not the committed run had them.
 */
function committed(): MetacontrollerResult {
  const result = readResults()?.metacontroller;
  if (!result?.flagSets[0]?.waves[0]) throw new Error('bench/results.json: no metacontroller part');
  return withoutAudit(result);
}

function withoutAudit(result: MetacontrollerResult): MetacontrollerResult {
  const copy = structuredClone(result);
  delete copy.auditedUser;
  for (const set of copy.flagSets) for (const wave of set.waves) delete wave.auditRequests;
  return copy;
}

function audited(wave: WaveResult, byRequest: Record<string, number>, notOk = {}): WaveResult {
  const total = Object.values(byRequest).reduce((a, b) => a + b, 0);
  const failed = Object.values(notOk as Record<string, number>).reduce((a, b) => a + b, 0);
  const audit: AuditCounts = {
    total,
    byRequest,
    byCodeClass: { '2xx': total - failed, ...(failed ? { '4xx': failed } : {}) },
    notOk,
  };
  return {
    ...wave,
    auditRequests: { ...audit, perVirtualCluster: perEach(byRequest, wave.virtualClusters) },
  };
}

/** The table's rows: request name → its cells. */
function table(lines: string[]): Map<string, string[]> {
  const rows = lines.filter((line) => line.startsWith('| ') && !line.startsWith('| ---'));
  return new Map(
    rows.map((row) => {
      const [name = '', ...cells] = row.slice(2, -2).split(' | ');
      return [name, cells];
    }),
  );
}

describe('bench report: Metacontroller’s requests from the audit log', () => {
  it('has no audit section for a run recorded before the audit log, and renders as before', () => {
    const result = committed();
    expect(auditMarkdown(result)).to.deep.equal([]);
    const results = readResults();
    if (!results) throw new Error('bench/results.json missing');
    const md = renderMarkdown({ ...results, metacontroller: result });
    expect(md).to.include('## Apply → Ready through Metacontroller');
    expect(md).to.not.include(TITLE);
  });

  it('shows each request per VirtualCluster in a column per flag set and wave, most first', () => {
    const base = committed();
    const [set] = base.flagSets;
    if (!set) throw new Error('no flag set');
    const size = (n: number) => ({ ...(set.waves[0] as WaveResult), virtualClusters: n });
    const result: MetacontrollerResult = {
      ...base,
      auditedUser: 'system:serviceaccount:metacontroller:metacontroller',
      flagSets: [
        {
          ...set,
          waves: [
            audited(size(1), { 'update virtualclusters/status': 3, 'patch clusters.k3k.io': 1 }),
            audited(
              size(50),
              { 'update virtualclusters/status': 160, 'patch clusters.k3k.io': 50, 'get /apis': 4 },
              { 'update virtualclusters/status 409': 9 },
            ),
          ],
        },
      ],
    };
    const lines = auditMarkdown(result);
    expect(lines[0]).to.include(TITLE);
    const rows = table(lines);
    expect(rows.get('Request')).to.deep.equal([`${set.name}, 1 VC`, `${set.name}, 50 VC`]);
    expect([...rows.keys()].slice(1, 4)).to.deep.equal([
      'update virtualclusters/status',
      'patch clusters.k3k.io',
      'get /apis',
    ]);
    expect(rows.get('update virtualclusters/status')).to.deep.equal(['3', '3.20']);
    expect(rows.get('get /apis')).to.deep.equal(['–', '0.08']);
    expect(rows.get('**All** (in the wave)')).to.deep.equal(['**4** (4)', '**4.28** (214)']);
    expect(rows.get('Not answered with 2xx')).to.deep.equal([
      '–',
      'update virtualclusters/status 409 0.18',
    ]);
  });
});
