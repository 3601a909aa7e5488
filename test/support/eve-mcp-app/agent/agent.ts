import { defineAgent } from 'eve';
import { mockModel } from 'eve/evals';

// The same deterministic answers the bridge's scripted model gives a plain message.
export default defineAgent({
  model: mockModel(({ lastUserMessage }) => `Echo: ${lastUserMessage}`),
});
