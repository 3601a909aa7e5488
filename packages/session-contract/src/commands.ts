import { z } from 'zod';
import { principalSchema as principal } from './principal.ts';

/**
 * One schema per session command, and one per its result. The routes build commands, one
 * entry point (`Sessions.execute`) runs them, and a command forwarded to the instance that
 * owns the session is encoded, checked and decoded by these same schemas, as is its answer.
 */

/** File bytes in memory, base64 on the wire between instances. */
const bytes = z.codec(z.base64(), z.custom<Uint8Array>((data) => data instanceof Uint8Array), {
  decode: (base64) => new Uint8Array(Buffer.from(base64, 'base64')),
  encode: (data) => Buffer.from(data).toString('base64'),
});

const receivedPart = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({
    type: z.literal('file'),
    mediaType: z.string(),
    filename: z.string().optional(),
    size: z.number().int().nonnegative().optional(),
    url: z.string().optional(),
  }),
]);

const userFile = z.strictObject({
  mediaType: z.string(),
  filename: z.string().optional(),
  /** Decoded bytes of a base64 or `data:` part. */
  data: bytes.optional(),
  /** The address of a part sent by URL; the bridge does not fetch it. */
  url: z.string().optional(),
});

/** A user message as a caller sends it, before the manager assigns its delivery. */
export const messageInput = z.strictObject({
  text: z.string(),
  parts: z.array(receivedPart),
  files: z.array(userFile),
  /** What the client said about its own state (`clientContext`), passed through untouched. */
  clientContext: z.unknown().optional(),
  /** A JSON Schema the turn's answer must match (Eve's `outputSchema`): the answer is then a structured value. */
  outputSchema: z.record(z.string(), z.unknown()).optional(),
});
export type MessageInput = z.output<typeof messageInput>;

export const turnPolicy = z.enum(['steer', 'queue']);
export type TurnPolicy = z.output<typeof turnPolicy>;

export const inputResponse = z.strictObject({
  requestId: z.string().min(1),
  optionId: z.string().min(1).optional(),
  text: z.string().optional(),
});

const sessionId = z.string().min(1);

export const sessionCommand = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('create'),
    principal: principal.optional(),
    input: messageInput.optional(),
    operationId: z.string().min(1).optional(),
    /** The first message's delivery id, chosen where the request arrived (a remote caller's callback is bound to it). */
    deliveryId: z.string().min(1).optional(),
  }),
  z.strictObject({
    kind: z.literal('send'),
    sessionId,
    principal: principal.optional(),
    input: messageInput,
    policy: turnPolicy,
    /** Chosen where the request arrived, so a forwarded message keeps the id its caller was told. */
    deliveryId: z.string().min(1),
  }),
  z.strictObject({ kind: z.literal('respond'), sessionId, responses: z.array(inputResponse).min(1) }),
  z.strictObject({ kind: z.literal('cancel'), sessionId, turnId: z.string().min(1).optional() }),
  z.strictObject({ kind: z.literal('clear'), sessionId }),
  z.strictObject({ kind: z.literal('compact'), sessionId }),
  z.strictObject({ kind: z.literal('reset'), sessionId }),
]);
export type SessionCommand = z.output<typeof sessionCommand>;
export type CommandKind = SessionCommand['kind'];
type CommandMap = { [C in SessionCommand as C['kind']]: C };
export type CommandOf<K extends CommandKind> = CommandMap[K] & { kind: K };
/** A command addressed to an existing session: what can be forwarded to its owner. */
export type SessionBoundCommand = CommandOf<Exclude<CommandKind, 'create'>>;

const accepted = z.enum(['accepted', 'no_active_session']);

/** What each command answers. */
export const commandResults = {
  /** The new (or, for a repeated operationId, the existing) session's id. */
  create: z.string().min(1),
  /** The delivery id of the message. */
  send: z.string().min(1),
  /** The delivery id of the answers. */
  respond: z.string().min(1),
  cancel: z.enum(['accepted', 'no_active_turn']),
  clear: accepted,
  compact: accepted,
  reset: z.enum(['reset', 'no_active_session']),
} satisfies { [K in CommandKind]: z.ZodType };

type ResultMap = { [K in CommandKind]: z.output<(typeof commandResults)[K]> };
export type CommandResult<K extends CommandKind> = ResultMap[K];

const resultSchemas: { [K in CommandKind]: z.ZodType<CommandResult<K>> } = commandResults;

/** Checks an answer that came back from another instance against the command's result schema. */
export function parseCommandResult<K extends CommandKind>(kind: K, value: unknown): CommandResult<K> {
  return resultSchemas[kind].parse(value);
}

/** A command as plain JSON, to cross to another instance; `sessionCommand.parse` reads it back. */
export function encodeCommand(command: SessionCommand): z.input<typeof sessionCommand> {
  return z.encode(sessionCommand, command);
}

/** One handler per command kind: what implements the session commands. */
export type CommandHandlers = { [K in CommandKind]: (command: CommandOf<K>) => Promise<CommandResult<K>> };

/** Runs a command with the handler of its kind. */
export function dispatch<K extends CommandKind>(handlers: CommandHandlers, command: CommandOf<K>): Promise<CommandResult<K>> {
  const handler: (command: CommandOf<K>) => Promise<CommandResult<K>> = handlers[command.kind];
  return handler(command);
}
