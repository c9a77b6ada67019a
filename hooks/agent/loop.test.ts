import { expect } from 'chai';
import { DEFAULT_CELL_CONFIG } from '../cell/config.js';
import { gpuNode, readyProvider } from '../cell/testing.js';
import { createLogger } from '../server/logger.js';
import { runAgentLoop } from './loop.js';
import { captureLogLines as capture, emptyConfigMap, fakeApi } from './testing.js';

const config = {
  intervalSeconds: 5,
  machineProfiles: ['a100'],
  cell: DEFAULT_CELL_CONFIG,
};

describe('the cell agent loop (hooks/agent/loop.ts)', () => {
  it('logs one JSON line per pass with what each report became', async () => {
    const { lines, stream } = capture();
    const api = fakeApi(
      gpuNode('n1'),
      ...readyProvider(),
      emptyConfigMap('kubecell-system', 'kubecell-cell-report-a100'),
    );
    await runAgentLoop({
      api,
      config,
      logger: createLogger({ level: 'info', stream }),
      signal: new AbortController().signal,
      once: true,
    });
    const [line] = lines();
    expect(line).to.include({ level: 'info', msg: 'cell agent pass' });
    expect(line?.['reports']).to.deep.equal({ a100: 'updated' });
    expect(line?.['sealed']).to.deep.equal({});
    expect(line).to.have.property('durationMs').that.is.a('number');
    expect(lines()).to.have.length(1);
  });

  it('keeps passing every interval until stopped, logging failures as warnings', async () => {
    const { lines, stream } = capture();
    const api = fakeApi(gpuNode('n1'));
    api.failing.add('/api/v1/services');
    const controller = new AbortController();
    const running = runAgentLoop({
      api,
      config: { ...config, intervalSeconds: 0.02 } as typeof config,
      logger: createLogger({ level: 'info', stream }),
      signal: controller.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await running;
    const passes = lines();
    expect(passes.length).to.be.greaterThan(1);
    expect(passes[0]).to.include({ level: 'warn', errorCount: 1 });
    expect(passes[0]?.['errors']).to.deep.equal([
      'reading the cluster: GET /api/v1/services: HTTP 403: forbidden',
    ]);
  });
});
