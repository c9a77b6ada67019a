/**
 * The validation layer's verdicts on KubeCell objects, remembered by content.
 *
 * Checking a KubeCell object against its CRD schema and CEL rules is most of a hook call's cost
 * (measured with the benchmark's resolved VirtualCluster sync request: 0.66 ms of 1.08 ms
 * in-process, the floor of parsing and re-serialising the request 0.14 ms), and Metacontroller
 * sends the same objects again and again: the parent, its Cell and its class on every resync.
 * The verdict is a pure function of the object's JSON, so it is kept under the SHA-256 of the
 * kind and that JSON: an object that changes by one byte is checked anew, and a forged request
 * that reuses a valid object's uid and resourceVersion with other content gains nothing (a key
 * on uid and resourceVersion alone would trust the request's word for what it carries).
 *
 * Bounded by bytes (hooks/memo/bounded-memo.ts): 4 MiB of digests and messages. Objects over
 * MAX_MEMO_JSON_CHARS are checked every time and never kept, so one huge object cannot flush the
 * memo.
 */
import { KINDS, type KindName } from '../api/kinds.js';
import { validateObject } from '../api/validate-object.js';
import { memoiseByText, stringBytes, type TextMemoStats } from '../memo/bounded-memo.js';

const MEMO_MAX_BYTES = 4 * 1024 * 1024;
/** A Cell with about 2,000 Nodes in its status; larger objects are checked on every call. */
const MAX_MEMO_JSON_CHARS = 2 * 1024 * 1024;

const verdicts = memoiseByText<readonly string[]>(
  {
    maxBytes: MEMO_MAX_BYTES,
    maxTextLength: MAX_MEMO_JSON_CHARS,
    key: 'sha256',
    sizeOf: (messages) => messages.reduce((bytes, message) => bytes + stringBytes(message), 0),
  },
  (text) => {
    const newline = text.indexOf('\n');
    const kind = text.slice(0, newline) as KindName;
    return validateObject(KINDS[kind], JSON.parse(text.slice(newline + 1))).map(
      (error) => error.message,
    );
  },
);

/** The problems of a KubeCell object of `kind` on its own, as the admission webhook finds them. */
export function kubeCellObjectProblems(kind: KindName, object: unknown): readonly string[] {
  return verdicts(`${kind}\n${JSON.stringify(object)}`);
}

/** Hits, misses and retained bytes, for the metrics. */
export function verdictMemoStats(): TextMemoStats {
  return verdicts.stats();
}
