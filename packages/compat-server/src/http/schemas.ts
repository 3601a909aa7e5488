import { z } from 'zod';
import { inputResponse, turnPolicy } from '@eve-flue/session-contract';
import { capabilities } from '../remote/protocol.ts';

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const filePart = z.object({
  type: z.literal('file'),
  mediaType: z.string().min(1),
  filename: z.string().optional(),
  /** base64, a `data:` URL, or an http(s) URL. */
  data: z.string().min(1),
});
/** AI SDK image parts: the same as a file part with an image type. */
const imagePart = z.object({ type: z.literal('image'), image: z.string().min(1), mediaType: z.string().min(1).optional() });

export const messageSchema = z.union([
  z.string().refine((s) => s.trim().length > 0, 'message must not be empty'),
  z.array(z.discriminatedUnion('type', [textPart, filePart, imagePart])).min(1, 'message must have at least one part'),
]);
export type MessageBody = z.infer<typeof messageSchema>;

const clientContext = z.union([z.string(), z.array(z.string()), z.record(z.string(), z.unknown())]);
const outputSchema = z.record(z.string(), z.unknown());
/** Eve's remote-agent fields, each checked as Eve checks it (`remote/protocol.ts`, `remote/forwarded-principal.ts`). */
const remoteAgentFields = {
  callback: z.unknown().optional(),
  forwardedPrincipal: z.unknown().optional(),
};

export const createBody = z.object({
  message: messageSchema.optional(),
  clientContext: clientContext.optional(),
  outputSchema: outputSchema.optional(),
  operationId: z.string().min(1).max(200).optional(),
  ...remoteAgentFields,
  protocolVersion: z.unknown().optional(),
  capabilities: capabilities.optional(),
});

/** A follow-up is either a message or answers to input requests: parsed into one of the two. */
export const followUpBody = z
  .object({
    message: messageSchema.optional(),
    inputResponses: z.array(inputResponse).min(1, 'inputResponses must not be empty').optional(),
    turnPolicy: turnPolicy.optional(),
    clientContext: clientContext.optional(),
    outputSchema: outputSchema.optional(),
    ...remoteAgentFields,
  })
  .transform((body, context) => {
    const remote = { callback: body.callback, forwardedPrincipal: body.forwardedPrincipal };
    if (body.message !== undefined && body.inputResponses === undefined) {
      return {
        kind: 'message' as const,
        message: body.message,
        turnPolicy: body.turnPolicy ?? 'steer',
        clientContext: body.clientContext,
        outputSchema: body.outputSchema,
        ...remote,
      };
    }
    if (body.inputResponses !== undefined && body.message === undefined) return { kind: 'answers' as const, inputResponses: body.inputResponses, ...remote };
    context.addIssue({ code: 'custom', message: 'Send exactly one of message or inputResponses.' });
    return z.NEVER;
  });

export const cancelBody = z.object({ turnId: z.string().min(1).optional() });
export const resetBody = z.object({ reason: z.string().optional() });

const flag = z.enum(['1', '0', 'true', 'false']).transform((v) => v === '1' || v === 'true');

export const streamQuery = z.object({
  startIndex: z
    .string()
    .regex(/^-?\d{1,15}$/, 'startIndex must be an integer')
    .transform(Number)
    .optional(),
  follow: flag.optional(),
  includeTailIndex: flag.optional(),
  streamControlVersion: z.string().optional(),
});
