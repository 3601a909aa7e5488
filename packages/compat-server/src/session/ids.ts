import { nanoid } from 'nanoid';

/** Identifiers are unguessable: session ids address sessions, so they must not be enumerable. */
export const newSessionId = (): string => `ses_${nanoid()}`;
export const newDeliveryId = (): string => `dlv_${nanoid()}`;
export const newRequestId = (): string => `req_${nanoid()}`;
export const turnIdFor = (sequence: number): string => `turn_${sequence}`;
