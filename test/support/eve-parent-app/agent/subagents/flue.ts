import { defineRemoteAgent } from 'eve';

/** The bridge with route auth off (development). */
export default defineRemoteAgent({
  url: () => process.env.FLUE_BRIDGE_URL ?? 'http://127.0.0.1:9',
  description: 'A Flue agent behind the Eve/Flue bridge.',
});
