import { expect } from 'chai';
import { checkResponse } from './response-shape.js';

const child = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api' } };

describe('hook response shape', () => {
  it('accepts complete composite, decorator and customize answers', () => {
    expect(
      checkResponse('compositeSync', {
        status: { phase: 'Ready' },
        children: [child],
        resyncAfterSeconds: 30,
        finalized: false,
      }),
    ).to.deep.equal([]);
    expect(
      checkResponse('decoratorSync', {
        labels: { a: 'b', c: null },
        annotations: {},
        status: null,
        attachments: [child],
      }),
    ).to.deep.equal([]);
    expect(
      checkResponse('customize', {
        relatedResources: [
          { apiVersion: 'v1', resource: 'nodes', labelSelector: { matchLabels: { a: 'b' } } },
          { apiVersion: 'v1', resource: 'secrets', namespace: 'ns', names: ['s'] },
        ],
      }),
    ).to.deep.equal([]);
  });

  it('refuses a field Metacontroller v2 does not know', () => {
    expect(checkResponse('compositeSync', { children: [], attachments: [] })).to.deep.equal([
      'response["attachments"]: unknown field (Metacontroller v2 accepts only status, children, resyncAfterSeconds, finalized)',
    ]);
    expect(checkResponse('customize', { relatedResources: [], status: {} })).to.have.length(1);
  });

  it('requires the list of desired objects', () => {
    expect(checkResponse('compositeSync', { status: {} })).to.deep.equal([
      'response.children: required (an empty list means "delete them all")',
    ]);
    expect(checkResponse('decoratorSync', { attachments: {} })).to.deep.equal([
      'response.attachments: must be an array, got object',
    ]);
    expect(checkResponse('customize', {})).to.deep.equal([
      'response.relatedResources: required (an empty list means "delete them all")',
    ]);
  });

  it('names a desired object without apiVersion, kind or name', () => {
    expect(
      checkResponse('compositeSync', { children: [child, { kind: 'Secret', metadata: {} }, 7] }),
    ).to.deep.equal([
      'response.children[1].apiVersion: required',
      'response.children[1].metadata.name: required',
      'response.children[2]: must be an object, got number',
    ]);
  });

  it('checks status, resyncAfterSeconds and finalized types', () => {
    expect(
      checkResponse('compositeSync', {
        children: [],
        status: 'Ready',
        resyncAfterSeconds: -1,
        finalized: 'yes',
      }),
    ).to.deep.equal([
      'response.status: must be an object, got string',
      'response.resyncAfterSeconds: must be a number >= 0',
      'response.finalized: must be a boolean, got string',
    ]);
  });

  it('refuses a related rule with both a label selector and names', () => {
    expect(
      checkResponse('customize', {
        relatedResources: [
          { apiVersion: 'v1', resource: 'secrets', labelSelector: {}, names: ['a'] },
        ],
      }),
    ).to.deep.equal(['response.relatedResources[0]: use labelSelector or names, not both']);
  });

  it('accepts a label selector within a namespace', () => {
    expect(
      checkResponse('customize', {
        relatedResources: [
          { apiVersion: 'v1', resource: 'secrets', namespace: 'a', labelSelector: {} },
        ],
      }),
    ).to.deep.equal([]);
  });

  it('refuses an answer that is not an object', () => {
    expect(checkResponse('compositeSync', undefined)).to.deep.equal([
      'response: must be a JSON object, got undefined',
    ]);
  });
});
