/**
 * A store (the journal, the sign-in store) cannot be reached: callers answer 503 and write
 * nothing. Whichever package's store failed, the transports recognise this one class.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  readonly code = 'service_unavailable';
  constructor(message = 'The session store is unavailable.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * This instance no longer holds the session it tried to write to: another one took it over.
 * The write is refused, not retried; the caller answers 503 and the client tries again.
 */
export class SessionTakenOverError extends Error {
  override name = 'SessionTakenOverError';
  readonly code = 'service_unavailable';
}

/** Runs a store command, turning any failure of the store into StoreUnavailableError. */
export async function storeCall<T>(command: () => Promise<T>, store = 'The session store (Redis)'): Promise<T> {
  try {
    return await command();
  } catch (error) {
    throw new StoreUnavailableError(`${store} is unavailable.`, { cause: error });
  }
}
