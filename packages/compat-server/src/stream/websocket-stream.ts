import type { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import { CLOSE_CODES, ERRORS, TAIL_INDEX_CONTROL, type ErrorCode } from '@eve-flue/eve-protocol';
import { refusalOf, STORE_UNAVAILABLE } from '../http/errors.ts';
import { JournalFollower, type FollowSink, type FollowWatch } from '../journal/follow.ts';
import type { Journal, JournalLine } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import type { ServerObserver } from '../observer.ts';
import type { StreamTimings } from './ndjson-stream.ts';
import type { OpenStreams } from './open-streams.ts';
import { sentPage, textFrames } from './page-bytes.ts';
import type { StreamPlan } from './plan.ts';

/** Limits of WebSocket streams (`CompatServerOptions['stream']`). */
export interface WebSocketStreamLimits {
  /**
   * Bytes a WebSocket stream may hold queued for one reader (its socket's `writableLength`) before it waits
   * for them to reach the socket; never less than the socket's own high-water mark (16 KiB). Default: 1 MiB.
   */
  maxBufferedBytes: number;
  /**
   * How long a WebSocket reader over `maxBufferedBytes` gets to drain before it is closed with
   * 4008 and told the index to resume at. Default: 5 s.
   */
  slowReaderGraceMs: number;
}

export const DEFAULT_WEBSOCKET_LIMITS: WebSocketStreamLimits = { maxBufferedBytes: 1024 * 1024, slowReaderGraceMs: 5_000 };

/** What every WebSocket stream of a server shares. */
export interface WebSocketStreamContext {
  journal: Journal;
  timings: StreamTimings & WebSocketStreamLimits;
  open: OpenStreams<WebSocketStream>;
  observer: ServerObserver;
  logger: Logger;
  /** Hears each stream open and close, per session. */
  watch?: FollowWatch;
  /** Every stream's `ws` error listener (one for all: a peer's protocol errors are only worth a debug line). */
  onError: (error: Error) => void;
}

/**
 * The server's `ws` sockets (its `WebSocket` option): each knows the stream it carries, so that
 * every socket's 'pong' and 'close' listeners are the same two functions, not two closures of
 * its own (about 150 bytes on every idle stream).
 */
export class StreamWebSocket extends WebSocket {
  /** Set as the stream starts, right after the upgrade. */
  stream?: WebSocketStream;
}

/**
 * One upgraded session stream: the session's lines as text frames written straight to the
 * socket, each page framed once for every reader (`textFrames`) and sent in one write, with
 * back-pressure by the socket's own buffer. `ws` still does the handshake, pings and closing.
 */
export class WebSocketStream implements FollowSink {
  readonly #context: WebSocketStreamContext;
  readonly #ws: StreamWebSocket;
  readonly #socket: Duplex;
  readonly #sessionId: string;
  readonly #path: string;
  readonly #opened = Date.now();
  readonly #follower: JournalFollower;
  #events = 0;
  /** The index after the last line sent: where a reader cut off resumes. */
  #next: number;
  #lastPing = Date.now();
  #answered = true;
  #grace: NodeJS.Timeout | undefined;

  constructor(context: WebSocketStreamContext, ws: StreamWebSocket, socket: Duplex, plan: StreamPlan, path: string) {
    this.#context = context;
    this.#ws = ws;
    this.#socket = socket;
    this.#sessionId = plan.sessionId;
    this.#path = path;
    this.#next = plan.from;
    ws.stream = this;
    ws.on('pong', WebSocketStream.#onPong);
    ws.on('error', context.onError);
    ws.on('close', WebSocketStream.#onClose);
    context.observer.streamOpened?.('websocket');
    context.open.add(this);
    context.logger.debug({ path, from: plan.from, until: plan.until }, 'websocket stream opened');
    if (plan.tail !== undefined) ws.send(JSON.stringify({ $eve: TAIL_INDEX_CONTROL, version: 1, tailIndex: plan.tail }));
    this.#follower = new JournalFollower(context.journal, plan.sessionId, plan, this, context.watch);
  }

  write(page: readonly JournalLine[]): boolean {
    if (this.#ws.readyState !== this.#ws.OPEN) {
      this.#follower.close();
      return false;
    }
    const sent = sentPage(page);
    this.#socket.write(textFrames(sent));
    this.#events += sent.count;
    this.#next = page[sent.count - 1]!.index + 1;
    if (sent.ends) {
      this.#follower.close();
      this.#ws.close(CLOSE_CODES.normal, 'session ended');
      return false;
    }
    // Over the limit, once the socket itself asks for a 'drain' (so that one will come): wait for it, for a while.
    if (this.#socket.writableLength <= this.#context.timings.maxBufferedBytes || !this.#socket.writableNeedDrain) return true;
    const drained = () => {
      clearTimeout(this.#grace);
      this.#follower.resume();
    };
    this.#socket.once('drain', drained);
    this.#grace = setTimeout(() => {
      this.#socket.off('drain', drained);
      this.#cutOff();
    }, this.#context.timings.slowReaderGraceMs);
    return false;
  }

  end(error?: unknown): void {
    if (this.#ws.readyState !== this.#ws.OPEN) return;
    if (error === undefined) return this.#ws.close(CLOSE_CODES.normal, 'tail reached');
    // 1013 (try again later) when the store is down, else 1011; either way, resume from the cursor.
    const { logger } = this.#context;
    const unavailable = refusalOf(error) === STORE_UNAVAILABLE;
    if (unavailable) logger.warn({ err: error, path: this.#path }, 'session store unavailable; websocket stream closed');
    else logger.error({ err: error, path: this.#path }, 'websocket stream failed');
    const code: ErrorCode = unavailable ? 'service_unavailable' : 'internal_error';
    this.#ws.close(ERRORS[code].closeCode, unavailable ? 'store unavailable' : 'stream failed');
  }

  /** Pings every `heartbeatMs` (the sweep sees it up to `sweepMs` late); a peer that did not answer the last ping is gone. */
  beat(now: number): void {
    if (now - this.#lastPing < this.#context.timings.heartbeatMs - this.#context.open.sweepMs) return;
    if (!this.#answered) {
      this.#context.logger.info({ path: this.#path }, 'websocket peer missed a pong; terminating');
      this.#ws.terminate();
      return;
    }
    this.#answered = false;
    this.#lastPing = now;
    this.#ws.ping();
  }

  /** The server shuts down: closes with 1001, and terminates a peer that does not answer within `graceMs`. Resolves once closed. */
  goAway(graceMs: number): Promise<void> {
    const ws = this.#ws;
    return new Promise<void>((resolve) => {
      if (ws.readyState === ws.CLOSED) return resolve();
      ws.once('close', () => resolve());
      ws.close(CLOSE_CODES.goingAway, 'server shutting down');
      setTimeout(() => ws.terminate(), graceMs).unref();
    });
  }

  /** Every socket's 'pong' listener. */
  static #onPong(this: StreamWebSocket): void {
    this.stream!.#answered = true;
  }

  /** Every socket's 'close' listener. */
  static #onClose(this: StreamWebSocket): void {
    this.stream!.#closed();
  }

  #cutOff(): void {
    this.#follower.close();
    if (this.#ws.readyState !== this.#ws.OPEN) return;
    const resumeAt = this.#next;
    this.#context.logger.info({ path: this.#path, resumeAt, bufferedAmount: this.#socket.writableLength }, 'slow websocket reader cut off');
    this.#ws.close(CLOSE_CODES.slowReader, `slow reader: resume at startIndex=${resumeAt}`);
  }

  #closed(): void {
    this.#follower.close();
    clearTimeout(this.#grace);
    this.#context.open.delete(this);
    this.#context.observer.streamClosed?.({
      transport: 'websocket',
      sessionId: this.#sessionId,
      events: this.#events,
      durationMs: Date.now() - this.#opened,
      path: this.#path,
    });
  }
}
