import { defineRemoteAgent } from 'eve';

/** The bridge behind a bearer token, which trusts this app to forward its caller. */
export default defineRemoteAgent({
  url: () => process.env.GUARDED_BRIDGE_URL ?? 'http://127.0.0.1:9',
  description: 'A Flue agent behind the Eve/Flue bridge, with route auth.',
  headers: () => ({ authorization: `Bearer ${process.env.GUARDED_BRIDGE_TOKEN ?? ''}` }),
  forwardPrincipal: true,
});
