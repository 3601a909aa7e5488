import type { ServerResponse } from 'node:http';
import { HEADERS, HEARTBEAT_LINE, LEASE_ENDED_LINE, NDJSON_CONTENT_TYPE, STREAM_VERSION } from '@eve-flue/eve-protocol';
import { refusalOf, STORE_UNAVAILABLE } from '../http/errors.ts';
import { JournalFollower, type FollowSink, type FollowWatch } from '../journal/follow.ts';
import type { Journal, JournalLine } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import type { ServerObserver } from '../observer.ts';
import { OpenStreams } from './open-streams.ts';
import { ndjsonBytes, sentPage } from './page-bytes.ts';
import type { StreamPlan } from './plan.ts';

export interface StreamTimings {
  /** Longest silence before a heartbeat line; the client drops a connection after 15 s. */
  heartbeatMs: number;
  /** How long a leased response (`streamControlVersion=1`) lasts before the client renews it. */
  leaseMs: number;
}

export interface NdjsonStreamsOptions {
  journal: Journal;
  timings: StreamTimings;
  observer: ServerObserver;
  logger: Logger;
  /** Hears each stream open and close, per session. */
  watch?: FollowWatch;
}

/** Every NDJSON session stream of one server: opens them, and ends them all when it drains. */
export class NdjsonStreams {
  readonly options: NdjsonStreamsOptions;
  readonly open: OpenStreams<NdjsonStream>;
  #draining = false;

  constructor(options: NdjsonStreamsOptions) {
    this.options = options;
    this.open = new OpenStreams(options.timings.heartbeatMs);
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Starts writing the stream `plan` describes to `response`; it runs until one of its ends. */
  stream(response: ServerResponse, plan: StreamPlan): void {
    new NdjsonStream(this, response, plan);
  }

  /** The server drains: every stream ends resumably now, and any opened later at once. */
  endAll(): void {
    this.#draining = true;
    for (const stream of this.open.all()) stream.endResumably();
  }
}

/**
 * A session's events as NDJSON: an opening newline, the journal from `from`, then live appends,
 * with heartbeats. Ends after a terminal event, at a bounded read's tail, when the lease runs
 * out, when the server drains, or when the client goes away. Ending for a lease or a drain is
 * resumable: the lease-ended line (for clients that understand it) makes the client reconnect at
 * its cursor at once; others reconnect after their back-off. Waits for `drain`, so a slow reader
 * costs no memory.
 */
class NdjsonStream implements FollowSink {
  readonly #streams: NdjsonStreams;
  readonly #response: ServerResponse;
  readonly #sessionId: string;
  /** Leased (`streamControlVersion=1`): it ends resumably with the lease-ended line. */
  readonly #leased: boolean;
  readonly #opened = Date.now();
  readonly #follower: JournalFollower;
  readonly #lease: NodeJS.Timeout | undefined;
  #lastWrite = 0;
  #events = 0;

  constructor(streams: NdjsonStreams, response: ServerResponse, plan: StreamPlan) {
    this.#streams = streams;
    this.#response = response;
    this.#sessionId = plan.sessionId;
    this.#leased = plan.leased;
    response.writeHead(200, {
      'content-type': NDJSON_CONTENT_TYPE,
      'cache-control': 'no-store, no-transform',
      'x-accel-buffering': 'no',
      [HEADERS.streamVersion]: STREAM_VERSION,
      [HEADERS.streamFormat]: 'ndjson',
      [HEADERS.sessionId]: plan.sessionId,
      ...(plan.tail !== undefined ? { [HEADERS.streamTailIndex]: String(plan.tail) } : {}),
    });
    // The head on its own, now: sent with the first line it would go out inside a new string, and
    // the response would keep it as the tree of some 30 concatenations Node built it from (about
    // 1 KiB) for as long as it is open; sent alone, it is flattened as it is written.
    response.flushHeaders();
    response.on('close', this.#closed);
    streams.options.observer.streamOpened?.('ndjson');
    streams.open.add(this);
    this.#write(HEARTBEAT_LINE);
    this.#lease = plan.leased ? setTimeout(() => this.endResumably(), streams.options.timings.leaseMs) : undefined;
    this.#follower = new JournalFollower(streams.options.journal, plan.sessionId, plan, this, streams.options.watch);
    if (streams.draining) this.endResumably();
  }

  write(page: readonly JournalLine[]): boolean {
    if (this.#response.writableEnded) return false;
    const sent = sentPage(page);
    this.#events += sent.count;
    const room = this.#write(ndjsonBytes(sent));
    if (sent.ends) {
      this.#end();
      return false;
    }
    if (!room) this.#response.once('drain', () => this.#follower.resume());
    return room;
  }

  end(error?: unknown): void {
    if (error !== undefined) {
      const { logger } = this.#streams.options;
      if (refusalOf(error) === STORE_UNAVAILABLE) logger.warn({ err: error, path: this.#response.req.url }, 'session store unavailable; stream ended');
      else logger.error({ err: error, path: this.#response.req.url }, 'stream failed');
    }
    this.#end();
  }

  /** The sweep sees a silence up to `sweepMs` late: a heartbeat goes out early enough that none lasts `heartbeatMs`. */
  beat(now: number): void {
    if (now - this.#lastWrite >= this.#streams.options.timings.heartbeatMs - this.#streams.open.sweepMs) this.#write(HEARTBEAT_LINE);
  }

  endResumably(): void {
    this.#end(this.#leased ? LEASE_ENDED_LINE : undefined);
  }

  #write(chunk: string | Buffer): boolean {
    if (this.#response.writableEnded) return false;
    this.#lastWrite = Date.now();
    return this.#response.write(chunk);
  }

  #end(last?: string): void {
    this.#follower?.close();
    // Ended: no more heartbeats, and a drain no longer counts it (a slow reader may hold it open a while).
    this.#streams.open.delete(this);
    if (!this.#response.writableEnded) this.#response.end(last);
  }

  /** The response is over, however it ended (`end()` or the client going away). */
  readonly #closed = (): void => {
    this.#follower.close();
    clearTimeout(this.#lease);
    this.#streams.open.delete(this);
    this.#streams.options.observer.streamClosed?.({
      transport: 'ndjson',
      sessionId: this.#sessionId,
      events: this.#events,
      durationMs: Date.now() - this.#opened,
      request: this.#response.req,
    });
  };
}
