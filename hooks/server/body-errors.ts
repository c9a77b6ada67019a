/**
 * Turns errors from express's JSON body parser into answers that name the
 * problem. Messages never quote the body: V8's JSON errors can include a
 * fragment of the input, and hook bodies carry Secret data.
 */

export interface ErrorAnswer {
  status: number;
  message: string;
}

interface BodyParserError {
  type: string;
  status?: number;
  message: string;
  length?: number;
  limit?: number;
  expose?: boolean;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return err instanceof Error && typeof (err as Partial<BodyParserError>).type === 'string';
}

/**
 * The answer for a body-parser error, or `undefined` when `err` is not one.
 * `bodyLimit` is the configured limit as written (e.g. `64mb`).
 */
export function describeBodyError(err: unknown, bodyLimit: string): ErrorAnswer | undefined {
  if (!isBodyParserError(err)) return undefined;
  switch (err.type) {
    case 'entity.parse.failed':
      return {
        status: 400,
        message: `request body is not valid JSON: ${withoutInputFragment(err.message)}`,
      };
    case 'entity.too.large':
      return {
        status: 413,
        message:
          `request body${err.length !== undefined ? ` (${err.length} bytes)` : ''} exceeds the ` +
          `limit of ${bodyLimit}${err.limit !== undefined ? ` (${err.limit} bytes)` : ''}; ` +
          'raise KUBECELL_BODY_LIMIT on the hook server',
      };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { status: 415, message: err.message };
    case 'request.aborted':
      return { status: 400, message: 'request aborted by the client before the body was read' };
    case 'request.size.invalid':
      return { status: 400, message: 'request body size does not match Content-Length' };
    default: {
      const status =
        err.status !== undefined && err.status >= 400 && err.status < 500 ? err.status : 400;
      return {
        status,
        message: err.expose === true ? err.message : 'request body could not be read',
      };
    }
  }
}

/**
 * V8 quotes part of the input in some messages (`Unexpected token 'o', "not
 * json"... is not valid JSON`, or `..."r": oops"...` in the middle of a long
 * body). Keep only what comes before the first quote.
 */
export function withoutInputFragment(message: string): string {
  const quote = message.indexOf('"');
  return quote === -1 ? message : message.slice(0, quote).replace(/[\s,.…]+$/, '');
}
