import { expect, test } from '@jest/globals';
import { describeFailure } from '../src/failure.ts';

test('an SDK error with an empty text keeps its HTTP status', () => {
  const error = Object.assign(new Error('Error POSTing to endpoint: '), { code: 503 });
  expect(describeFailure(error)).toBe('HTTP 503');
});

test('the status and the server’s message, from anywhere in the cause chain', () => {
  const error = new Error('fetch failed', { cause: Object.assign(new Error('Error POSTing to endpoint: {"error":"maintenance"}'), { data: { status: 502 } }) });
  expect(describeFailure(error)).toBe('HTTP 502: fetch failed: maintenance');
});

test('a network error keeps its code', () => {
  const error = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
  expect(describeFailure(error)).toBe('fetch failed: connect ECONNREFUSED 127.0.0.1:1');
});
