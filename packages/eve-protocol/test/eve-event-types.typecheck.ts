/**
 * Eve's own event types are the contract: checked by `tsc` (the typecheck CI runs), not by jest.
 * Every event the bridge journals must be one `eve/client` accepts as its `MessageStreamEvent`,
 * and every event Eve defines must be modelled here. A mismatch fails the typecheck and names
 * the event types that drifted.
 */
import type { MessageStreamEvent } from 'eve/client';
import type { EveEvent, EveEventType } from '../src/index.ts';

/** The bridge's own events, which `eve/client` ignores. */
type BridgeExtension = 'authorization.granted';
type EveType = MessageStreamEvent['type'];
type Shared = Exclude<EveEventType, BridgeExtension>;

/** The shared event types whose bridge shape Eve's client would not accept. */
type NotEves = { [T in Shared]: EveEvent<T> extends Extract<MessageStreamEvent, { type: T }> ? never : T }[Shared];
/** Event types Eve defines that the bridge does not model. */
type Unmodelled = Exclude<EveType, EveEventType>;
/** Event types the bridge has that are neither Eve's nor a declared extension. */
type Unknown = Exclude<EveEventType, EveType | BridgeExtension>;

/** `true` when nothing drifted; else the drifted types, spelled out in tsc's error. */
type Nothing<T> = [T] extends [never] ? true : `drifted: ${T & string}`;

export const everyEventIsEves: Nothing<NotEves> = true;
export const everyEveEventIsModelled: Nothing<Unmodelled> = true;
export const noUndeclaredExtension: Nothing<Unknown> = true;
