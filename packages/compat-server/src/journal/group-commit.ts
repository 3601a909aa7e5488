/** What the scheduler drives: a synchronous store transaction (like `node:sqlite`'s) and the writes in it. */
export interface GroupStore<Write, Result> {
  begin(): void;
  commit(): void;
  rollback(): void;
  /** Runs one write inside the open transaction. */
  write(write: Write): Result;
  /** Makes a committed write visible (to readers, subscribers); runs in commit order. */
  committed(write: Write, result: Result): void;
}

interface Pending<Write, Result> {
  write: Write;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: every write queued in one tick of the event loop runs in one transaction, in
 * queue order. A write becomes visible (`committed`) only once that transaction has committed,
 * and its promise settles after that. A write that throws rejects alone: the transaction is
 * rolled back and run again without it. A failed commit rejects every write of the batch, and
 * none of them becomes visible.
 */
export class GroupCommit<Write, Result> {
  readonly #store: GroupStore<Write, Result>;
  #pending: Pending<Write, Result>[] = [];
  #scheduled = false;
  readonly #tick = () => this.flush();

  constructor(store: GroupStore<Write, Result>) {
    this.#store = store;
  }

  enqueue(write: Write): Promise<Result> {
    const { promise, resolve, reject } = Promise.withResolvers<Result>();
    this.#pending.push({ write, resolve, reject });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#tick);
    }
    return promise;
  }

  /** Commits everything queued so far, now. Each tick runs it; call it before closing the store. */
  flush(): void {
    this.#scheduled = false;
    let batch = this.#pending;
    this.#pending = [];
    while (batch.length > 0) {
      const failed = this.#attempt(batch);
      if (failed === undefined) return;
      batch = batch.filter((item) => item !== failed);
    }
  }

  /** One transaction over `batch`; returns the write that threw, after rolling back, to run again without it. */
  #attempt(batch: Pending<Write, Result>[]): Pending<Write, Result> | undefined {
    const store = this.#store;
    const results: Result[] = [];
    try {
      store.begin();
    } catch (error) {
      for (const item of batch) item.reject(error);
      return undefined;
    }
    for (const item of batch) {
      try {
        results.push(store.write(item.write));
      } catch (error) {
        item.reject(error);
        try {
          store.rollback();
        } catch (rollbackError) {
          // The store is in no state to retry the others.
          for (const other of batch) if (other !== item) other.reject(rollbackError);
          return undefined;
        }
        return item;
      }
    }
    try {
      store.commit();
    } catch (error) {
      try {
        store.rollback();
      } catch {
        // The failed commit already ended the transaction.
      }
      for (const item of batch) item.reject(error);
      return undefined;
    }
    batch.forEach((item, i) => {
      try {
        store.committed(item.write, results[i]!);
        item.resolve(results[i]!);
      } catch (error) {
        item.reject(error);
      }
    });
    return undefined;
  }
}
