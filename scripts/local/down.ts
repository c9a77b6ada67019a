// `npm run local-down`: stops the instance `npm run local-up` started and checks that none of
// its processes is left. Idempotent: with nothing running it says so and succeeds.
//
// The supervisor gets SIGTERM and up to 30 s to stop the hook server and the control plane
// (with --remote also OCM, the managed cluster and the cell agent) itself; whatever it recorded in the state file and is still alive afterwards is killed
// (SIGKILL to its process group) and named.
import { existsSync, rmSync } from 'node:fs';
import { signalGroup } from '../../harness/cluster/processes.js';
import { remoteFiles } from './remote-files.js';
import {
  liveProcesses,
  localDir,
  localKubeconfigFile,
  readState,
  removeState,
  stateFile,
  supervisorAlive,
  waitUntilGone,
} from './state.js';

const SUPERVISOR_GRACE_MS = 30_000;

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<number> {
  const state = readState();
  if (!state) {
    say(`KubeCell local is not running (no ${stateFile}).`);
    return 0;
  }
  const forced: string[] = [];

  if (supervisorAlive(state)) {
    say(`stopping KubeCell local (supervisor pid ${state.supervisorPid}) ...`);
    // The state is read again right before the signal: a supervisor that is still starting
    // records its servers as they come up.
    const latest = readState() ?? state;
    Object.assign(state.processes, latest.processes);
    signalGroup(state.supervisorPid, 'SIGTERM');
    const stopped = await waitUntilGone(() => !supervisorAlive(state), SUPERVISOR_GRACE_MS);
    if (!stopped) {
      signalGroup(state.supervisorPid, 'SIGKILL');
      forced.push(`supervisor (pid ${state.supervisorPid})`);
      await waitUntilGone(() => !supervisorAlive(state), 5_000);
    }
  } else {
    say(
      state.error === undefined
        ? `the supervisor (pid ${state.supervisorPid}) is gone; cleaning up after it`
        : `KubeCell local is not running: ${state.error.split('\n')[0]}; cleaning up after it`,
    );
  }

  for (const [name, recorded] of liveProcesses(state)) {
    signalGroup(recorded.pid, 'SIGKILL');
    forced.push(`${name} (pid ${recorded.pid})`);
  }
  await waitUntilGone(() => liveProcesses(state).length === 0, 10_000);
  const left = liveProcesses(state);
  const supervisorLeft = supervisorAlive(state);

  if (forced.length > 0) say(`had to kill (SIGKILL): ${forced.join(', ')}`);
  if (state.dir !== undefined && existsSync(state.dir)) {
    say(`the control plane's directory (data, logs) is kept: ${state.dir}`);
  }
  if (left.length > 0 || supervisorLeft) {
    const names = left.map(([name, recorded]) => `${name} (pid ${recorded.pid})`);
    if (supervisorLeft) names.unshift(`supervisor (pid ${state.supervisorPid})`);
    say(`STILL RUNNING after SIGKILL: ${names.join(', ')}; the state file ${stateFile} is kept`);
    return 1;
  }
  removeState();
  rmSync(localKubeconfigFile, { force: true });
  rmSync(remoteFiles(localDir).dir, { recursive: true, force: true });
  const checked = Object.entries(state.processes).map(
    ([name, recorded]) => `${name} ${recorded.pid}`,
  );
  say(
    `KubeCell local stopped; no process of it is left (checked supervisor ${state.supervisorPid}` +
      `${checked.length > 0 ? `, ${checked.join(', ')}` : ''}).`,
  );
  if (state.simulated) {
    say(
      'The simulation (--simulate: harness/simulate/) ran inside the supervisor and stopped with it.',
    );
  }
  if (state.remote) {
    say(
      `--remote: the OCM hub, the managed cluster ${state.remote.managedCluster} (control plane, ` +
        "OCM's agents, the cell agent) stopped with it; its kubeconfig and the sealing key are removed.",
    );
  }
  return 0;
}

process.exitCode = await main();
