/**
 * Messages on named channels (Redis pub/sub in a cluster), one subscription connection shared by
 * every store of an instance. A store depends on this, not on the connection behind it.
 */
export interface Channels {
  /** Calls `listener` with each message on `channel` until the returned function is called. */
  listen(channel: string, listener: (message: string) => void): () => void;
  /** Resolves once every channel listened to is subscribed; rejects with StoreUnavailableError when it cannot be. */
  ready(): Promise<void>;
}
