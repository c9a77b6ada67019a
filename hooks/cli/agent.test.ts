import { expect } from 'chai';
import { gpuNode, readyProvider } from '../cell/testing.js';
import { captureLogLines as capture, emptyConfigMap, fakeApi } from '../agent/testing.js';
import { createLogger } from '../server/logger.js';
import { runAgentCommand } from './agent.js';
import { runCli } from './cli.js';

describe('kubecell agent (hooks/cli/agent.ts)', () => {
  it('`kubecell agent --once` runs one pass with the settings of its environment', async () => {
    const { lines, stream } = capture();
    const api = fakeApi(
      gpuNode('n1'),
      ...readyProvider(),
      emptyConfigMap('kubecell-system', 'kubecell-cell-report-a100'),
    );
    const stderr: string[] = [];
    const code = await runAgentCommand(
      ['--once'],
      {
        stdout: { write: () => true },
        stderr: { write: (text: string) => stderr.push(text) },
        env: { KUBECELL_AGENT_MACHINE_PROFILES: 'a100' },
      },
      { api: () => api, logger: createLogger({ level: 'info', stream }) },
    );
    expect(code, stderr.join('')).to.equal(0);
    expect(lines().map((line) => line['msg'])).to.deep.equal([
      'cell agent started',
      'cell agent pass',
      'cell agent stopped',
    ]);
    expect(api.writes).to.deep.equal([
      'PUT /api/v1/namespaces/kubecell-system/configmaps/kubecell-cell-report-a100',
    ]);
  });

  it('`kubecell agent` refuses bad settings and unknown arguments before it starts', async () => {
    const stderr: string[] = [];
    const io = {
      stdout: { write: () => true },
      stderr: { write: (text: string) => stderr.push(text) },
      env: { KUBECELL_AGENT_INTERVAL_SECONDS: 'soon' },
    };
    expect(await runAgentCommand([], io, { api: () => fakeApi() })).to.equal(2);
    expect(stderr.join('')).to.contain('KUBECELL_AGENT_INTERVAL_SECONDS="soon"');
    expect(await runAgentCommand(['--loud'], io)).to.equal(2);
    expect(stderr.join('')).to.contain('unknown argument "--loud"');
  });
  it('is a command of kubecell, with its help', async () => {
    const out: string[] = [];
    const io = { stdout: { write: (t: string) => out.push(t) }, stderr: { write: () => true } };
    expect(await runCli(['help', 'agent'], io)).to.equal(0);
    expect(out.join('')).to.match(/^Usage:\n {2}kubecell agent \[--once\]/);
  });
});
