import { monotonicFactory } from 'ulidx';
import type { EveEventDraft, EveEventType } from './events.ts';
import { pooledRandom } from './random-pool.ts';

export interface EveEventMeta {
  /** `evt_` + ULID, minted once when the event is journaled and stable across every replay. */
  id: string;
  /** ISO-8601 time the event was journaled. */
  at: string;
  /** The accepted messages whose turn this event belongs to. */
  deliveryIds?: string[];
}

/** A journaled event, as every stream reader receives it. */
export type EveEvent<T extends EveEventType = EveEventType> = Extract<EveEventDraft, { type: T }> & {
  meta: EveEventMeta;
  /** Absolute, zero-based position in the session's stream. */
  streamIndex: number;
};

const nextUlid = monotonicFactory(pooledRandom());

export function createEventId(now: number = Date.now()): string {
  return `evt_${nextUlid(now)}`;
}

/** Wraps a draft in its envelope. The journal calls this once per event, under its append lock. */
export function envelope(draft: EveEventDraft, streamIndex: number, deliveryIds?: readonly string[], now: number = Date.now()): EveEvent {
  const meta: EveEventMeta = { id: createEventId(now), at: new Date(now).toISOString() };
  if (deliveryIds && deliveryIds.length > 0) meta.deliveryIds = [...deliveryIds];
  return { type: draft.type, data: draft.data, meta, streamIndex } as EveEvent;
}
