import { defineAgent } from 'eve';
import { mockModel } from 'eve/evals';

/**
 * The parent's scripted model. A message `structured <task>` goes to the `structured` workflow
 * tool (a remote turn with an outputSchema); `guarded <task>` to the remote agent behind route
 * auth; anything else to the remote agent `flue`. Once the remote's result is back, it replies
 * with it.
 */
export default defineAgent({
  model: mockModel(({ lastUserMessage, messages, toolResults }) => {
    const settled = messages.filter((m) => m.role === 'user' && m.text.includes('<task_result')).at(-1);
    if (settled) return `Parent got: ${settled.text}`;
    const structured = toolResults.find((r) => r.name === 'structured');
    if (structured) return `Structured: ${JSON.stringify(structured.output)}`;
    if (toolResults.length > 0) return 'Waiting for the remote agent.';
    const message = lastUserMessage ?? '';
    const routed = /^(structured|guarded) ([\s\S]*)$/.exec(message);
    if (routed?.[1] === 'structured') return { toolCalls: [{ name: 'structured', input: { message: routed[2] } }] };
    if (routed?.[1] === 'guarded') return { toolCalls: [{ name: 'guarded', input: { message: routed[2] } }] };
    return { toolCalls: [{ name: 'flue', input: { message } }] };
  }),
});
