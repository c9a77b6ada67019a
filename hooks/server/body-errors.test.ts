import { expect } from 'chai';
import { describeBodyError, withoutInputFragment } from './body-errors.js';

function bodyParserError(
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
): Error {
  return Object.assign(new Error(message), { type, ...extra });
}

describe('body parser errors', () => {
  it('drops the input fragment V8 quotes in JSON errors', () => {
    expect(withoutInputFragment(`Unexpected token 'o', "not json"... is not valid JSON`)).to.equal(
      "Unexpected token 'o'",
    );
    expect(
      withoutInputFragment(`Unexpected token 'o', ..."r": oops s"... is not valid JSON`),
    ).to.equal("Unexpected token 'o'");
    expect(withoutInputFragment("Expected property name or '}' in JSON at position 1")).to.equal(
      "Expected property name or '}' in JSON at position 1",
    );
  });

  it('maps a parse failure to 400', () => {
    expect(
      describeBodyError(
        bodyParserError(
          'entity.parse.failed',
          `Unexpected token 's', "secret-token" is not valid JSON`,
        ),
        '64mb',
      ),
    ).to.deep.equal({
      status: 400,
      message: "request body is not valid JSON: Unexpected token 's'",
    });
  });

  it('maps an oversized body to 413 naming the limit and the variable', () => {
    expect(
      describeBodyError(
        bodyParserError('entity.too.large', 'request entity too large', {
          length: 2048,
          limit: 1024,
        }),
        '1kb',
      ),
    ).to.deep.equal({
      status: 413,
      message:
        'request body (2048 bytes) exceeds the limit of 1kb (1024 bytes); raise KUBECELL_BODY_LIMIT on the hook server',
    });
  });

  it('maps unsupported encodings and charsets to 415', () => {
    expect(
      describeBodyError(
        bodyParserError('encoding.unsupported', 'unsupported content encoding "br"'),
        '1mb',
      )?.status,
    ).to.equal(415);
    expect(
      describeBodyError(
        bodyParserError('charset.unsupported', 'unsupported charset "KOI8-R"'),
        '1mb',
      )?.status,
    ).to.equal(415);
  });

  it('leaves other errors alone', () => {
    expect(describeBodyError(new Error('handler bug'), '1mb')).to.equal(undefined);
    expect(describeBodyError('string', '1mb')).to.equal(undefined);
  });
});
