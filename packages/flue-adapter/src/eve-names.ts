/**
 * Flue tool names in text (a validation error Flue writes for the model, and whatever the model
 * repeats of it) swapped for Eve names, so that no `mcp__` name reaches a client.
 */
const FLUE_NAME = /mcp__[A-Za-z0-9_-]+/g;
/** A tail that may be the start of a Flue name the next delta completes. */
const PARTIAL_NAME = /m(?:c(?:p(?:_(?:_[A-Za-z0-9_-]*)?)?)?)?$/;

export type ToEveName = (flueName: string) => string;

export function withEveNames(text: string, toEve: ToEveName): string {
  return text.replace(FLUE_NAME, (name) => toEve(name));
}

/** The same swap over streamed text: a tail that may be a name cut between deltas waits for the next one. */
export class EveNamesInStream {
  readonly #toEve: ToEveName;
  #held = '';

  constructor(toEve: ToEveName) {
    this.#toEve = toEve;
  }

  /** The part of the text so far that can be sent now. */
  push(delta: string): string {
    const text = this.#held + delta;
    const tail = PARTIAL_NAME.exec(text);
    const cut = tail ? tail.index : text.length;
    this.#held = text.slice(cut);
    return withEveNames(text.slice(0, cut), this.#toEve);
  }

  /** Whatever was held back, at the end of the text. */
  flush(): string {
    const rest = withEveNames(this.#held, this.#toEve);
    this.#held = '';
    return rest;
  }
}
