import { Ajv, type ValidateFunction } from 'ajv';
import { TurnError } from '@eve-flue/session-contract';
import type { JsonValue } from '@eve-flue/eve-protocol';
import { RequestError } from './errors.ts';

const ajv = new Ajv({ allErrors: false, strict: false });

/**
 * Compiles a caller's `outputSchema` (JSON Schema); one that does not compile is the caller's
 * mistake (400). Ajv would keep every schema it compiled (and refuse a second one with the same
 * `$id`): each is removed again, its validator kept.
 */
export function compileOutputSchema(schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw new RequestError('invalid_request', `outputSchema is not a usable JSON Schema: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    ajv.removeSchema(schema);
  }
}

/**
 * A turn's structured output: its final answer read as JSON (a fenced block or the bare text)
 * and checked against the schema. An answer that is not such a value fails the turn, with why.
 */
export function structuredOutput(schema: Record<string, unknown>, answer: string): JsonValue {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n```\s*$/u.exec(answer);
  // Parsed from JSON text: a JSON value.
  let value: JsonValue;
  try {
    value = JSON.parse(fenced ? fenced[1]! : answer) as JsonValue;
  } catch {
    throw new TurnError('invalid_output', 'The agent did not answer with JSON matching the output schema.');
  }
  const validate = compileOutputSchema(schema);
  if (!validate(value)) {
    throw new TurnError('invalid_output', `The agent's answer does not match the output schema: ${ajv.errorsText(validate.errors)}`);
  }
  return value;
}

/** What the model is told when a structured answer is wanted (appended to the message it receives). */
export function outputInstruction(schema: Record<string, unknown>): string {
  return `Answer with only a JSON value (no prose, no code fence) that matches this JSON Schema:\n${JSON.stringify(schema)}`;
}
