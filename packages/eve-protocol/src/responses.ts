/** Success bodies of the session routes, with the exact keys the client's strict schemas accept. */

export interface HealthBody {
  ok: true;
  status: 'ready';
  workflowId: string;
}

export interface AcceptedBody {
  ok: true;
  sessionId: string;
  status: 'accepted';
  deliveryId?: string;
  /** The remote-agent protocol version served, for a parent that sent a `callback`. */
  protocolVersion?: number;
}

export type CancelBody = { ok: true; status: 'accepted'; sessionId: string } | { ok: true; status: 'no_active_turn' };

export type ControlBody = { ok: true; status: 'accepted'; sessionId: string } | { ok: true; status: 'no_active_session' };

export type ResetBody = { ok: true; status: 'reset'; previousSessionId: string } | { ok: true; status: 'no_active_session' };
