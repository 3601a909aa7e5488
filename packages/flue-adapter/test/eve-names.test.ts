import { expect, test } from '@jest/globals';
import { EveNamesInStream, withEveNames } from '../src/eve-names.ts';

const toEve = (name: string) => name.replace(/^mcp__/, 'connection__');

test('Flue names in text become Eve names', () => {
  expect(withEveNames('Validation failed for tool "mcp__pyfull__greet": x', toEve)).toBe('Validation failed for tool "connection__pyfull__greet": x');
});

test('a name cut between deltas is swapped whole, and nothing else is held back', () => {
  const stream = new EveNamesInStream(toEve);
  const text = 'Tool "mcp__py-full__greet" failed; mcp__a__b';
  const sent = [...text.match(/.{1,4}/gs)!].map((delta) => stream.push(delta)).join('') + stream.flush();
  expect(sent).toBe('Tool "connection__py-full__greet" failed; connection__a__b');
  expect(stream.push('plain text, no name')).toBe('plain text, no name');
  expect(stream.push('ends with m')).toBe('ends with ');
  expect(stream.flush()).toBe('m');
});
