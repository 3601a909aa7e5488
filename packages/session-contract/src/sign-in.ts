/** How a sign-in ended, as the broker settles it and a parked turn reports it. */
export type SignInOutcome = { outcome: 'authorized' } | SignInFailure;

export type SignInFailure = { outcome: 'declined' | 'failed' | 'timed-out'; reason: string };
