import { defineAgent } from 'eve';
import { mockModel } from 'eve/evals';

// The answers the bridge's scripted model gives: a plain message is echoed, `/fail` fails.
export default defineAgent({
  model: mockModel(({ lastUserMessage }) => {
    if (lastUserMessage === '/fail') throw new Error('The scripted model failed on purpose.');
    return `Echo: ${lastUserMessage}`;
  }),
});
