/** An error a runtime throws to fail a turn with an Eve error code (`turn.failed.code`). */
export class TurnError extends Error {
  override name = 'TurnError';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}
