import type { EvictionReason } from './session/residency.ts';
import type { IncomingMessage } from 'node:http';

export type StreamTransport = 'ndjson' | 'websocket';
export type TurnOutcome = 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** How one session stream went, reported when it ends. */
export type StreamSummary = StreamSummaryCommon &
  (
    | { transport: 'ndjson'; request: IncomingMessage }
    /** An upgraded stream keeps nothing of its request but the path. */
    | { transport: 'websocket'; path: string }
  );

interface StreamSummaryCommon {
  sessionId: string;
  /** Journal events written to the reader (heartbeats and control lines not counted). */
  events: number;
  durationMs: number;
}

/** What the server reports as it works, for metrics and access logs; every hook optional. */
export interface ServerObserver {
  streamOpened?(transport: StreamTransport): void;
  streamClosed?(summary: StreamSummary): void;
  /** A stream refused before it opened (WebSocket upgrades, which bypass the HTTP routes). */
  streamRefused?(refusal: { transport: StreamTransport; status: number; request: IncomingMessage }): void;
  turnEnded?(outcome: TurnOutcome): void;
  /** An idle session left memory: after `idleSessionMs`, or past `maxResidentSessions`. */
  sessionEvicted?(reason: EvictionReason): void;
}
