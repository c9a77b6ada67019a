// kube-apiserver's audit log, when a caller asks for it (ControlPlaneOptions.auditLog): what each
// identity asked the apiserver, request by request, with its verb, resource and response code.
// The benchmark counts Metacontroller's requests from it (bench/audit-log.ts).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';

/**
 * `true`: every request; `{ users }`: only the requests of these user names (e.g.
 * `system:serviceaccount:metacontroller:metacontroller`), which keeps the file small when the
 * cluster is busy with others (a bench run writes hundreds of thousands of requests).
 */
export type AuditLogOption = true | { users: readonly string[] };

/** The user name the apiserver gives a ServiceAccount's tokens. */
export function serviceAccountUserName(account: { namespace: string; name: string }): string {
  return `system:serviceaccount:${account.namespace}:${account.name}`;
}

/**
 * The policy, written to `dir`, and kube-apiserver's flags for it; the log is `logFile`.
 *
 * One event per request, at stage ResponseComplete (RequestReceived and ResponseStarted left
 * out), at level Metadata: who, verb, resource, namespace, name, response code and timestamps,
 * no bodies. A watch therefore appears once, when it ends, stamped with the time it was received.
 * The log backend writes in blocking mode (its default: k8s.io/apiserver v0.35.4
 * pkg/server/options/audit.go, NewAuditOptions), so an event is in the file once its response
 * was sent.
 */
export function auditLogArgs(option: AuditLogOption, dir: string, logFile: string): string[] {
  const policyFile = path.join(dir, 'audit-policy.yaml');
  const rules =
    option === true
      ? [{ level: 'Metadata' }]
      : [{ level: 'Metadata', users: [...option.users] }, { level: 'None' }];
  writeFileSync(
    policyFile,
    stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived', 'ResponseStarted'],
      rules,
    }),
  );
  return [
    `--audit-policy-file=${policyFile}`,
    `--audit-log-path=${logFile}`,
    '--audit-log-format=json',
    // In MB. 0 would not mean "never": the log would rotate at lumberjack's default of 100 MB
    // (gopkg.in/natefinch/lumberjack.v2 lumberjack.go, max()), and a reader of the one file would
    // miss what was rotated away.
    '--audit-log-maxsize=100000',
  ];
}
