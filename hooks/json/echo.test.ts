import { expect } from 'chai';
import {
  MAX_ECHO_CHARS,
  MAX_MESSAGE_CHARS,
  boundFields,
  boundMessage,
  echo,
  quoted,
} from './echo.js';
import { captureLogger } from '../server/testing.js';

describe('bounded echoes (hooks/json/echo.ts)', () => {
  it('keeps every name the apiserver accepts whole, and cuts anything longer', () => {
    const namespaced = `${'n'.repeat(63)}/${'a'.repeat(253)}`;
    expect(echo(namespaced)).to.equal(namespaced);
    const long = 'x'.repeat(5 * 1024 * 1024);
    expect(echo(long)).to.equal(`${'x'.repeat(MAX_ECHO_CHARS)}…`);
    expect(echo(long, 10)).to.equal('xxxxxxxxxx…');
    expect(quoted(long, 3)).to.equal('"xxx…"');
  });

  it('never splits a surrogate pair', () => {
    const text = `ab${'😀'.repeat(10)}`;
    const cut = echo(text, 3);
    expect(cut).to.equal('ab…');
    expect(boundMessage('😀'.repeat(5000), 100)).to.not.match(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it('bounds a message by keeping its head and its tail', () => {
    const message = `VirtualCluster ${'a'.repeat(5_000_000)} is invalid: set spec.cellRef`;
    const bounded = boundMessage(message);
    expect(bounded.length).to.be.at.most(MAX_MESSAGE_CHARS + 40);
    expect(bounded).to.match(
      /^VirtualCluster a+… \[\d+ characters omitted\] …a+ is invalid: set spec\.cellRef$/,
    );
    expect(boundMessage('short')).to.equal('short');
  });

  it('bounds every string field a few levels deep, copying only what it cuts', () => {
    const big = 'b'.repeat(100_000);
    const fields = { a: 'ok', parent: { name: big, list: [big, 1] }, n: 3 };
    const bounded = boundFields(fields);
    expect(bounded.a).to.equal('ok');
    expect(bounded.parent.name.length).to.be.below(MAX_MESSAGE_CHARS + 40);
    expect((bounded.parent.list[0] as string).length).to.be.below(MAX_MESSAGE_CHARS + 40);
    expect(bounded.n).to.equal(3);
    expect(fields.parent.name, 'the input is not modified').to.equal(big);
    const small = { a: 'x', b: { c: 'y' } };
    expect(boundFields(small)).to.equal(small);
  });

  it('keeps every log line short, whatever a field holds', async () => {
    const logs = captureLogger();
    logs.logger.warn('x'.repeat(1_000_000), {
      name: 'n'.repeat(1_000_000),
      nested: { e: 'e'.repeat(1_000_000) },
    });
    await logs.waitForLines(1);
    expect(logs.lines[0]?.length).to.be.below(3 * (MAX_MESSAGE_CHARS + 100));
  });
});
