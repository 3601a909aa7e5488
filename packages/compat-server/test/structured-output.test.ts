import { expect, test } from '@jest/globals';
import { compileOutputSchema, structuredOutput } from '../src/session/structured-output.ts';

const weather = () => ({
  $id: 'https://schemas.example/weather',
  type: 'object',
  properties: { city: { type: 'string' }, temperature: { type: 'number' } },
  required: ['city', 'temperature'],
  additionalProperties: false,
});

test('an answer that is JSON matching the schema is the value, bare or in a fence', () => {
  expect(structuredOutput(weather(), '{"city":"Paris","temperature":21}')).toEqual({ city: 'Paris', temperature: 21 });
  expect(structuredOutput(weather(), '```json\n{"city":"Oslo","temperature":-3}\n```')).toEqual({ city: 'Oslo', temperature: -3 });
});

test('an answer that is not such JSON fails the turn, saying why', () => {
  expect(() => structuredOutput(weather(), 'It is sunny in Paris.')).toThrow(expect.objectContaining({ code: 'invalid_output', message: expect.stringMatching(/did not answer with JSON/) }));
  expect(() => structuredOutput(weather(), '{"city":"Paris"}')).toThrow(expect.objectContaining({ code: 'invalid_output', message: expect.stringMatching(/temperature/) }));
});

test("a schema that does not compile is the caller's 400; the same $id twice is no conflict", () => {
  expect(() => compileOutputSchema({ type: 'not-a-type' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  for (let i = 0; i < 3; i++) expect(compileOutputSchema(weather())({ city: 'Rome', temperature: 30 })).toBe(true);
});
