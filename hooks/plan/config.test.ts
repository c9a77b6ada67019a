import { expect } from 'chai';
import { ConfigError } from '../config/env-reader.js';
import { parsePortRange } from '../config/env-reader.js';
import { loadPlanConfig } from './config.js';

describe('plan controller config', () => {
  it('defaults to a 900 s TTL, kubecell-system and the default NodePort range', () => {
    expect(loadPlanConfig({})).to.deep.equal({
      ttlSeconds: 900,
      cellNamespace: 'kubecell-system',
      nodePortRange: { first: 30000, last: 32767 },
    });
  });

  it('reads KUBECELL_PLAN_TTL_SECONDS, KUBECELL_CONTROLLER_NAMESPACE and KUBECELL_NODEPORT_RANGE', () => {
    expect(
      loadPlanConfig({
        KUBECELL_PLAN_TTL_SECONDS: ' 3600 ',
        KUBECELL_CONTROLLER_NAMESPACE: 'platform',
        KUBECELL_NODEPORT_RANGE: '31000-31999',
      }),
    ).to.deep.equal({
      ttlSeconds: 3600,
      cellNamespace: 'platform',
      nodePortRange: { first: 31000, last: 31999 },
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadPlanConfig({ KUBECELL_PLAN_TTL_SECONDS: '' }).ttlSeconds).to.equal(900);
  });

  it('names every invalid variable and how to fix it', () => {
    let error: unknown;
    try {
      loadPlanConfig({
        KUBECELL_PLAN_TTL_SECONDS: '15m',
        KUBECELL_CONTROLLER_NAMESPACE: 'Kube_Cell',
        KUBECELL_NODEPORT_RANGE: '32767-30000',
      });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const { problems } = error as ConfigError;
    expect(problems).to.deep.equal([
      'KUBECELL_PLAN_TTL_SECONDS="15m" is not a duration; set it to a whole number of seconds from 1 to 31536000 (default 900)',
      'KUBECELL_CONTROLLER_NAMESPACE="Kube_Cell" is not a namespace name; set it to a DNS label such as kubecell-system (the default)',
      'KUBECELL_NODEPORT_RANGE="32767-30000" is not a port range; set it to the apiserver\'s --service-node-port-range, FIRST-LAST with 1 <= FIRST <= LAST <= 65535 (default 30000-32767)',
    ]);
  });

  it('refuses a zero or year-plus TTL', () => {
    expect(() => loadPlanConfig({ KUBECELL_PLAN_TTL_SECONDS: '0' })).to.throw(ConfigError);
    expect(() => loadPlanConfig({ KUBECELL_PLAN_TTL_SECONDS: '31536001' })).to.throw(ConfigError);
    expect(loadPlanConfig({ KUBECELL_PLAN_TTL_SECONDS: '1' }).ttlSeconds).to.equal(1);
  });

  it('parses port ranges', () => {
    expect(parsePortRange('30000-32767')).to.deep.equal({ first: 30000, last: 32767 });
    expect(parsePortRange('80-80')).to.deep.equal({ first: 80, last: 80 });
    expect(parsePortRange('0-10')).to.equal(undefined);
    expect(parsePortRange('1-65536')).to.equal(undefined);
    expect(parsePortRange('30000')).to.equal(undefined);
    expect(parsePortRange('a-b')).to.equal(undefined);
  });
});
