/** The journal's backing store cannot be reached: callers answer 503 and write nothing. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(message = 'The session store is unavailable.', options?: { cause?: unknown }) {
    super(message, options);
  }
}
