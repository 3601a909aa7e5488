/** Who is calling. `id` is stable for a person or service; sign-ins and tokens are keyed by it. */
export interface Principal {
  id: string;
  type: 'user' | 'service';
  /** Set when a trusted forwarder asserted this principal (Eve's `forwardPrincipal`): the forwarder's id. */
  forwardedBy?: string;
}
