import { z } from 'zod';

const signInFailure = z.strictObject({ outcome: z.enum(['declined', 'failed', 'timed-out']), reason: z.string() });

/** How a sign-in ended, as the broker settles it, another instance hears it and a parked turn reports it. */
export const signInOutcome = z.discriminatedUnion('outcome', [z.strictObject({ outcome: z.literal('authorized') }), signInFailure]);

export type SignInOutcome = z.output<typeof signInOutcome>;
export type SignInFailure = z.output<typeof signInFailure>;
