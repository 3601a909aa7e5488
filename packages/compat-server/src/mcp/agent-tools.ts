import { z } from 'zod';

/**
 * Eve's four invocation tools, as `eve/channels/mcp` 0.80.1 declares them: names, descriptions,
 * annotations, input schemas with their limits, and the state every one of them answers.
 */

export const MAX_MESSAGE_BYTES = 65_536;
export const MAX_RESPONSE_TEXT_BYTES = 16_384;
export const MAX_RESPONSES_PER_UPDATE = 64;
const MAX_ID_CHARS = 256;

/** What the server tells the connecting model from `initialize` (Eve's words). */
export const INSTRUCTIONS = [
  'Each invocation is one durable agent task.',
  'Call agent_start once per task and keep the returned invocationId.',
  'Poll agent_get, waiting at least pollAfterMs between calls, until status is completed, failed, or cancelled.',
  'If status is input_required, answer every entry in inputRequests in one agent_update call; repeating accepted answers is safe.',
  'If status is authorization_required, show the user the authorization url or instructions and keep polling.',
  'isError on a tool result means your call was rejected; a failed status means the task failed.',
  'agent_start is not idempotent and a lost response leaves no invocationId, so ask the user before starting again.',
  'Work continues after your connection drops; agent_cancel stops it, then poll until any terminal status.',
].join(' ');

const encoder = new TextEncoder();
const utf8Bounded = (max: number) =>
  z.string().refine((value) => encoder.encode(value).byteLength <= max, { message: `must be at most ${String(max)} bytes when UTF-8 encoded` });

const invocationId = z.string().min(1).max(MAX_ID_CHARS);

const inputResponse = z.strictObject({
  optionId: z.string().max(256).optional(),
  requestId: z.string().min(1).max(256),
  text: utf8Bounded(MAX_RESPONSE_TEXT_BYTES).optional(),
});

const inputOption = z.strictObject({
  description: z.string().describe('Optional additional context for this option.').optional(),
  id: z.string().describe('Stable identifier for the option.'),
  label: z.string().describe('User-facing label for the option.'),
  style: z.enum(['primary', 'danger', 'default']).describe('Visual treatment hint for the option.').optional(),
});

const inputRequest = z.strictObject({
  action: z.strictObject({ callId: z.string(), input: z.record(z.string(), z.json()), kind: z.literal('tool-call'), toolName: z.string() }),
  allowFreeform: z.boolean().describe('Whether the user may answer with freeform text instead of selecting one of the provided options.').optional(),
  display: z.enum(['confirmation', 'select', 'text']).describe('Rendering hint: the channel uses this to pick a UX treatment.').optional(),
  kind: z.enum(['question', 'session-limit', 'tool-approval']).describe('Framework-owned request source used to resolve, route, and render the response.'),
  options: z.array(inputOption).describe('Selectable answer options to present to the user.').optional(),
  prompt: z.string().describe('The prompt to present to the user.'),
  requestId: z.string().describe('Stable identifier for this request.'),
});

const authorizationRequest = z.strictObject({
  authorization: z
    .strictObject({
      displayName: z.string().optional(),
      expiresAt: z.iso.datetime().optional(),
      instructions: z.string().optional(),
      url: z.url().optional(),
      userCode: z.string().optional(),
    })
    .optional(),
  description: z.string(),
  name: z.string(),
  webhookUrl: z.url().optional(),
});

const base = z.strictObject({ createdAt: z.iso.datetime(), expiresAt: z.iso.datetime().optional(), invocationId: z.string() });

const invocationState = z.discriminatedUnion('status', [
  base.extend({ pollAfterMs: z.number().int().nonnegative(), result: z.json().optional(), status: z.literal('working') }),
  base.extend({ inputRequests: z.record(z.string(), inputRequest), result: z.json().optional(), status: z.literal('input_required') }),
  base.extend({
    authorizations: z.array(authorizationRequest).min(1),
    pollAfterMs: z.number().int().nonnegative(),
    result: z.json().optional(),
    status: z.literal('authorization_required'),
  }),
  base.extend({ result: z.json().optional(), status: z.literal('completed') }),
  base.extend({ error: z.strictObject({ code: z.number().int(), data: z.json().optional(), message: z.string() }), status: z.literal('failed') }),
  base.extend({ status: z.literal('cancelled') }),
]);

export const agentToolInputs = {
  agent_start: z.strictObject({ message: utf8Bounded(MAX_MESSAGE_BYTES).min(1) }),
  agent_get: z.strictObject({ invocationId }),
  agent_update: z.strictObject({ invocationId, responses: z.array(inputResponse).min(1).max(MAX_RESPONSES_PER_UPDATE) }),
  agent_cancel: z.strictObject({ invocationId }),
};

export type AgentToolName = keyof typeof agentToolInputs;
export type AgentToolInput<N extends AgentToolName> = z.output<(typeof agentToolInputs)[N]>;

interface Annotations {
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
  readOnlyHint: boolean;
}

/** A tool as `tools/list` shows it. */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations?: Annotations;
}

const PUBLIC_NOTE = ' On this public channel, the invocation ID is a bearer capability until workflow retention expires.';

/** A zod schema as the JSON Schema a client reads (an object at the top, as MCP requires). */
export function objectSchema(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [key: string]: unknown } {
  return { type: 'object', ...(z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as Record<string, unknown>) };
}

const OUTPUT_SCHEMA = objectSchema(invocationState, 'output');

/**
 * The four tools. `agentDescription` opens `agent_start`'s description, as Eve does with the
 * agent's; `anonymous` adds Eve's warning that an invocation id is then a bearer capability.
 */
export function agentTools(agentDescription: string | undefined, anonymous: boolean): ListedTool[] {
  const note = anonymous ? PUBLIC_NOTE : '';
  const start = `Starts durable work and returns an invocation handle immediately. Call once per task; keep invocationId and poll agent_get. Not idempotent: if the response is lost, ask the user before starting again rather than retrying.${note}`;
  const tool = (name: AgentToolName, description: string, annotations: Annotations): ListedTool => ({
    name,
    description,
    inputSchema: objectSchema(agentToolInputs[name], 'input'),
    outputSchema: OUTPUT_SCHEMA,
    annotations,
  });
  return [
    tool('agent_start', agentDescription === undefined ? start : `${agentDescription} ${start}`, {
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
      readOnlyHint: false,
    }),
    tool(
      'agent_get',
      `Reads complete durable invocation state. Wait at least pollAfterMs between calls. Terminal statuses are completed, failed, and cancelled. input_required needs agent_update; authorization_required needs the user to follow the returned authorization.${note}`,
      { destructiveHint: false, idempotentHint: true, openWorldHint: false, readOnlyHint: true },
    ),
    tool(
      'agent_update',
      'Answers the pending input batch on an input_required invocation. Include one response per entry in inputRequests, each keyed by its requestId, in a single call; partial batches are rejected. Returns the current invocation state; repeating the same accepted answers is safe.',
      { destructiveHint: true, idempotentHint: false, openWorldHint: true, readOnlyHint: false },
    ),
    tool(
      'agent_cancel',
      'Requests cooperative cancellation of a non-terminal invocation. Cancellation is asynchronous and can race with completion: poll agent_get until status is terminal (cancelled, completed, or failed). Safe to call repeatedly.',
      { destructiveHint: true, idempotentHint: true, openWorldHint: false, readOnlyHint: false },
    ),
  ];
}

export const isAgentTool = (name: string): name is AgentToolName => Object.hasOwn(agentToolInputs, name);

/** Eve's message for arguments a tool's schema rejects. */
export function invalidArguments(tool: string, error: z.ZodError): string {
  const issues = error.issues.map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.map(String).join('.')}: ${issue.message}`));
  return `Invalid arguments for tool ${tool}: ${issues.join(', ')}`;
}
