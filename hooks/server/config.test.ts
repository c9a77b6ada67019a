import { expect } from 'chai';
import { ConfigError } from '../config/env-reader.js';
import { loadConfig, parseByteSize } from './config.js';

describe('hook server config', () => {
  it('defaults to port 8080, a 64mb body limit and info logs', () => {
    expect(loadConfig({})).to.deep.equal({
      port: 8080,
      bodyLimit: '64mb',
      bodyLimitBytes: 64 * 1024 * 1024,
      logLevel: 'info',
      maxInflight: 64,
      retryAfterSeconds: 1,
      deadlines: { headersSeconds: 10, bodySeconds: 20, requestSeconds: 30 },
      bodyBudget: '96mb',
      bodyBudgetBytes: 96 * 1024 * 1024,
      maxConnections: 1000,
    });
  });

  it('reads KUBECELL_PORT, KUBECELL_BODY_LIMIT and KUBECELL_LOG_LEVEL', () => {
    expect(
      loadConfig({
        KUBECELL_PORT: '9443',
        KUBECELL_BODY_LIMIT: '128MB',
        KUBECELL_LOG_LEVEL: 'DEBUG',
        // The budget must take a body of the limit's size.
        KUBECELL_BODY_BUDGET: '256mb',
      }),
    ).to.deep.equal({
      port: 9443,
      bodyLimit: '128MB',
      bodyLimitBytes: 128 * 1024 * 1024,
      logLevel: 'debug',
      maxInflight: 64,
      retryAfterSeconds: 1,
      deadlines: { headersSeconds: 10, bodySeconds: 20, requestSeconds: 30 },
      bodyBudget: '256mb',
      bodyBudgetBytes: 256 * 1024 * 1024,
      maxConnections: 1000,
    });
  });

  // --- load shedding
  it('reads KUBECELL_MAX_INFLIGHT (0 = no limit) and KUBECELL_RETRY_AFTER_SECONDS', () => {
    const config = loadConfig({ KUBECELL_MAX_INFLIGHT: '8', KUBECELL_RETRY_AFTER_SECONDS: '5' });
    expect(config).to.deep.include({ maxInflight: 8, retryAfterSeconds: 5 });
    expect(loadConfig({ KUBECELL_MAX_INFLIGHT: '0' }).maxInflight).to.equal(0);
  });

  it('refuses a load-shedding setting that is not a whole number in range', () => {
    for (const value of ['-1', '1.5', 'many', '100001']) {
      expect(() => loadConfig({ KUBECELL_MAX_INFLIGHT: value }), value).to.throw(
        ConfigError,
        /KUBECELL_MAX_INFLIGHT=.* is not a limit; .*0 \(no limit\) to 100000 \(default 64\)/,
      );
    }
    for (const value of ['0', '-1', '2.5', '3601', 'soon']) {
      expect(() => loadConfig({ KUBECELL_RETRY_AFTER_SECONDS: value }), value).to.throw(
        ConfigError,
        /KUBECELL_RETRY_AFTER_SECONDS=.* is not a delay; .*from 1 to 3600 \(default 1\)/,
      );
    }
  });
  // --- end load shedding

  // --- memory and connection bounds (body-budget.ts, connections.ts)
  it('reads KUBECELL_BODY_BUDGET and KUBECELL_MAX_CONNECTIONS', () => {
    const config = loadConfig(
      { KUBECELL_BODY_BUDGET: '1gb', KUBECELL_MAX_CONNECTIONS: '300' },
      { openFiles: 1024 },
    );
    expect(config).to.deep.include({
      bodyBudget: '1gb',
      bodyBudgetBytes: 1024 ** 3,
      maxConnections: 300,
    });
  });

  it('refuses a budget that is no size, or smaller than a body the server accepts', () => {
    expect(() => loadConfig({ KUBECELL_BODY_BUDGET: 'plenty' })).to.throw(
      ConfigError,
      /KUBECELL_BODY_BUDGET="plenty" is not a size; .*e\.g\. 96mb \(default 96mb\)/,
    );
    expect(() => loadConfig({ KUBECELL_BODY_BUDGET: '32mb' })).to.throw(
      ConfigError,
      'KUBECELL_BODY_BUDGET=32mb is smaller than KUBECELL_BODY_LIMIT (64mb): a body of that ' +
        'size could never be received; raise KUBECELL_BODY_BUDGET to at least 64mb (default 96mb)',
    );
    // With a small hook limit, the webhook's 8 MiB is the floor.
    expect(() => loadConfig({ KUBECELL_BODY_LIMIT: '1mb', KUBECELL_BODY_BUDGET: '4mb' })).to.throw(
      ConfigError,
      /smaller than the webhook's body limit \(8mb\)/,
    );
    expect(
      loadConfig({ KUBECELL_BODY_LIMIT: '1mb', KUBECELL_BODY_BUDGET: '8mb' }).bodyBudgetBytes,
    ).to.equal(8 * 1024 * 1024);
  });

  it('refuses a connection cap out of range, or beyond the open-file limit', () => {
    for (const value of ['0', '-1', '2.5', 'many', '1000001']) {
      expect(() => loadConfig({ KUBECELL_MAX_CONNECTIONS: value }, {}), value).to.throw(
        ConfigError,
        /KUBECELL_MAX_CONNECTIONS=.* is not a connection count; .*from 1 to 1000000 \(default 1000\)/,
      );
    }
    // Both ports at the cap, plus 100 descriptors for everything else.
    expect(loadConfig({}, { openFiles: 2100 }).maxConnections).to.equal(1000);
    expect(() => loadConfig({}, { openFiles: 400 })).to.throw(
      ConfigError,
      'KUBECELL_MAX_CONNECTIONS=1000 does not fit the open-file limit of 400: both ports at the ' +
        'cap plus 100 descriptors need 2100; set it to at most 150 or raise the limit (ulimit -n, ' +
        "or the container runtime's)",
    );
    expect(
      loadConfig({ KUBECELL_MAX_CONNECTIONS: '150' }, { openFiles: 400 }).maxConnections,
    ).to.equal(150);
  });
  // --- end memory and connection bounds

  // --- deadlines (hooks/server/deadlines.ts)
  it('reads the headers, body and request deadlines', () => {
    expect(
      loadConfig({
        KUBECELL_HEADERS_TIMEOUT_SECONDS: '5',
        KUBECELL_BODY_TIMEOUT_SECONDS: '5',
        KUBECELL_REQUEST_TIMEOUT_SECONDS: '120',
      }).deadlines,
    ).to.deep.equal({ headersSeconds: 5, bodySeconds: 5, requestSeconds: 120 });
  });

  it('refuses a deadline out of range, and one shorter than the deadline it includes', () => {
    for (const value of ['0', '-1', '2.5', '3601', 'soon']) {
      expect(() => loadConfig({ KUBECELL_HEADERS_TIMEOUT_SECONDS: value }), value).to.throw(
        ConfigError,
        /KUBECELL_HEADERS_TIMEOUT_SECONDS=.* is not a duration; .*from 1 to 3600 \(default 10\)/,
      );
    }
    let error: unknown;
    try {
      loadConfig({ KUBECELL_BODY_TIMEOUT_SECONDS: '5', KUBECELL_REQUEST_TIMEOUT_SECONDS: '4' });
    } catch (err) {
      error = err;
    }
    expect((error as ConfigError).problems).to.deep.equal([
      'KUBECELL_BODY_TIMEOUT_SECONDS=5 is shorter than KUBECELL_HEADERS_TIMEOUT_SECONDS=10; each ' +
        'deadline includes the one before it (headers <= body <= request): raise ' +
        'KUBECELL_BODY_TIMEOUT_SECONDS or lower KUBECELL_HEADERS_TIMEOUT_SECONDS',
      'KUBECELL_REQUEST_TIMEOUT_SECONDS=4 is shorter than KUBECELL_BODY_TIMEOUT_SECONDS=5; each ' +
        'deadline includes the one before it (headers <= body <= request): raise ' +
        'KUBECELL_REQUEST_TIMEOUT_SECONDS or lower KUBECELL_BODY_TIMEOUT_SECONDS',
    ]);
  });
  // --- end deadlines

  it('treats empty variables as unset', () => {
    expect(loadConfig({ KUBECELL_PORT: '', KUBECELL_LOG_LEVEL: '  ' }).port).to.equal(8080);
  });

  it('names every invalid variable and how to fix it', () => {
    let error: unknown;
    try {
      loadConfig({
        KUBECELL_PORT: '80a',
        KUBECELL_BODY_LIMIT: 'lots',
        KUBECELL_LOG_LEVEL: 'loud',
      });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).to.have.length(3);
    expect(problems[0]).to.equal(
      'KUBECELL_PORT="80a" is not a port; set it to an integer from 0 to 65535 (default 8080)',
    );
    expect(problems[1]).to.match(/^KUBECELL_BODY_LIMIT="lots" is not a size; .*e\.g\. 64mb/);
    expect(problems[2]).to.match(
      /^KUBECELL_LOG_LEVEL="loud" is not a log level; .*error, warn, info/,
    );
    expect(message).to.include('KUBECELL_PORT').and.include('KUBECELL_LOG_LEVEL');
  });

  it('refuses a port out of range', () => {
    expect(() => loadConfig({ KUBECELL_PORT: '65536' })).to.throw(ConfigError, 'KUBECELL_PORT');
  });

  describe('parseByteSize', () => {
    it('reads plain bytes and b/kb/mb/gb units (1024-based, any case)', () => {
      expect(parseByteSize('1048576')).to.equal(1048576);
      expect(parseByteSize('512b')).to.equal(512);
      expect(parseByteSize('100kb')).to.equal(102400);
      expect(parseByteSize('1.5MB')).to.equal(1572864);
      expect(parseByteSize('1 gb')).to.equal(1024 ** 3);
    });

    it('refuses zero, negatives, other units and garbage', () => {
      for (const text of ['0', '0mb', '-1mb', '10tb', '64 megabytes', 'mb', '']) {
        expect(parseByteSize(text), text).to.equal(undefined);
      }
    });
  });
});
