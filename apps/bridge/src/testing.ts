/**
 * Offline testing for a bridge config: a deterministic model, no provider or API key needed.
 * The agent calls `useModel(model)`; the config passes `providers: [provider]`.
 */
import { createScriptedModel, SCRIPTED_MODEL } from '@eve-flue/flue-adapter';

export { SCRIPTED_MODEL };

/**
 * The scripted model the demo runs on. It reads the latest user message: `/tool <name> <json>`
 * calls that tool (Eve or Flue name) and replies `Tool <name> returned: <text>`; `/sleep <ms>`
 * streams text for about that long; `/think <topic>` reasons first; `/fail` fails the model call;
 * anything else is answered `Echo: <message>`.
 */
export const scriptedModel = createScriptedModel;
