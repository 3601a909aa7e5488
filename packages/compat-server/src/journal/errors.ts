/** The journal's backing store cannot be reached: callers answer 503 and write nothing. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(message = 'The session store is unavailable.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** This instance no longer holds the session it tried to write to: another one took it over. */
export class SessionTakenOverError extends StoreUnavailableError {
  override name = 'SessionTakenOverError';
}

/** Runs a store command, turning any failure of the store into StoreUnavailableError. */
export async function storeCall<T>(command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (error) {
    throw new StoreUnavailableError('The session store (Redis) is unavailable.', { cause: error });
  }
}
