/**
 * Characters two YAML parsers read differently, refused anywhere in k3k's kubeconfig (issue 23,
 * finding 1). KubeCell reads the text with the `yaml` package (YAML 1.2: U+0085, U+2028 and
 * U+2029 are ordinary characters); kubectl reads the published one with go-yaml, which treats
 * them as line breaks (client-go v0.35.4 `tools/clientcmd/loader.go` `Load` decodes through
 * sigs.k8s.io/yaml v1.6.0, i.e. go.yaml.in/yaml/v2 v2.4.3, whose `yamlprivateh.go` `is_break`
 * is CR, LF, NEL, LS or PS). One
 * `current-context` line that continued with `U+2028users: ... exec: ...` passed KubeCell's
 * allowlist as a single string and became an exec command in kubectl's reading. A lone CR is a
 * line break to both but counted differently by positions; other control characters have no
 * business in a kubeconfig (its values are base64, URLs, names and tokens).
 *
 * Allowed: tab, LF, CR immediately followed by LF, and every other character from U+0020 up,
 * except DEL and the C1 controls (U+007F to U+009F, which include NEL) and U+2028, U+2029.
 */

export interface ForbiddenCharacter {
  /** `U+2028`. */
  codePoint: string;
  /** 1-based, counted in LF-terminated lines, as an editor shows it. */
  line: number;
  /** 1-based, in characters (UTF-16 code units) from the start of the line. */
  column: number;
}

const NAMES: Readonly<Record<number, string>> = {
  0x0d: 'CARRIAGE RETURN without LINE FEED',
  0x85: 'NEXT LINE',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
};

function isForbidden(code: number, next: number): boolean {
  if (code === 0x09 || code === 0x0a) return false;
  if (code === 0x0d) return next !== 0x0a;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
}

/** The first character of `text` that may not appear in a kubeconfig, if any. */
export function firstForbiddenCharacter(text: string): ForbiddenCharacter | undefined {
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (isForbidden(code, text.charCodeAt(index + 1))) {
      const codePoint = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
      return { codePoint, line, column: index - lineStart + 1 };
    }
    if (code === 0x0a) {
      line += 1;
      lineStart = index + 1;
    }
  }
  return undefined;
}

/** `U+2028 (LINE SEPARATOR) at line 3, column 27`; never the text around it. */
export function describeForbiddenCharacter(found: ForbiddenCharacter): string {
  const name = NAMES[Number.parseInt(found.codePoint.slice(2), 16)];
  const what = name === undefined ? found.codePoint : `${found.codePoint} (${name})`;
  return `${what} at line ${found.line}, column ${found.column}`;
}
