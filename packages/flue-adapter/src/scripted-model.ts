import { fauxAssistantMessage, fauxProvider, fauxText, fauxThinking, fauxToolCall } from '@earendil-works/pi-ai';
// The model only ever names tools from its own tool list, where every `mcp__` name came from a connection.
import { eveNameOfFlueName } from '@eve-flue/connections';

/**
 * A deterministic model for the embedded demo and the tests, on pi-ai's faux provider (the
 * offline model Flue accepts). It reads the latest user message:
 * - `/tool <name> <json>`: calls tool `<name>` (Eve or Flue name) with the JSON arguments, then
 *   replies `Tool <eve-name> returned: <result text>`; while `<name>`'s connection shows only its
 *   stand-in (`connection__<server>`, before a sign-in), calls the stand-in instead, and `<name>`
 *   once the turn goes on with the real tools;
 * - `/sleep <ms>`: streams text in small deltas for about that long;
 * - `/think <topic>`: reasons about the topic first, then replies `Thought about <topic>.`;
 * - `/fail`: the model call fails;
 * - `/recall`: replies `Recall: ` and the JSON list of the earlier user messages in its context
 *   (what the model remembers of the conversation);
 * - `/json <json>`: replies with that JSON text alone (a structured answer, for an `outputSchema`);
 * - anything else: `Echo: <message>`, in several deltas (`[n images]` added when images came along).
 * Text streams at a fixed pace, four characters a delta. A task an Eve parent delegated
 * (`defineRemoteAgent`) arrives wrapped in Eve's subagent prompt; the command is read from its
 * `Caller message:` part.
 */
export const SCRIPTED_PROVIDER = 'scripted';
export const SCRIPTED_MODEL = `${SCRIPTED_PROVIDER}/demo`;

const TOKENS_PER_SECOND = 200;
const CHARS_PER_TOKEN = 4;

type Context = { messages: { role: string; content: unknown; toolName?: string }[]; tools?: { name: string }[] };

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { type: 'text'; text: string } => part?.type === 'text')
    .map((part) => part.text)
    .join('');
}

/** Eve's remote-agent caller puts its own message after this line of its subagent prompt. */
const EVE_CALLER_MESSAGE = '\nCaller message:\n';

/** The caller's own message inside Eve's subagent prompt, or the text as it is. */
function callerMessage(text: string): string {
  const at = text.lastIndexOf(EVE_CALLER_MESSAGE);
  return at === -1 ? text : text.slice(at + EVE_CALLER_MESSAGE.length).trim();
}

/** The messages the person wrote, oldest first (Flue also sends its own signals as user-role text), and their images. */
function userMessages(messages: Context['messages']): { text: string; images: number }[] {
  const written: { text: string; images: number }[] = [];
  for (const message of messages) {
    if (message.role !== 'user') continue;
    // Flue lists a message's attachments in a block of its own after the text.
    const text = callerMessage(textOf(message.content).replace(/\s*<attachments>[\s\S]*?<\/attachments>/g, '').trim());
    const images = Array.isArray(message.content) ? message.content.filter((part) => part?.type === 'image').length : 0;
    if (!text.startsWith('<signal') && !text.startsWith('<compaction')) written.push({ text, images });
  }
  return written;
}

export function createScriptedModel() {
  const faux = fauxProvider({
    provider: SCRIPTED_PROVIDER,
    models: [{ id: 'demo' }],
    tokenSize: { min: 1, max: 1 },
    tokensPerSecond: TOKENS_PER_SECOND,
  });
  const respond = (context: Context) => {
    // Every model call consumes one queued response: keep the queue topped up.
    faux.appendResponses([respond]);
    const last = context.messages.at(-1);
    if (last?.role === 'toolResult') return fauxAssistantMessage(`Tool ${eveNameOfFlueName(last.toolName ?? '')} returned: ${textOf(last.content)}`);
    const written = userMessages(context.messages);
    const { text, images } = written.at(-1) ?? { text: '', images: 0 };
    if (text.startsWith('/recall')) return fauxAssistantMessage(`Recall: ${JSON.stringify(written.slice(0, -1).map((m) => m.text))}`);
    const tool = /^\/tool\s+(\S+)\s*(.*)$/s.exec(text);
    if (tool) {
      const wanted = tool[1]!;
      // A connection that shows only its stand-in until a sign-in: call the stand-in first.
      const known =
        context.tools?.find((t) => t.name === wanted || eveNameOfFlueName(t.name) === wanted) ??
        context.tools?.find((t) => t.name.startsWith('connection__') && wanted.startsWith(`${t.name}__`));
      if (!known) return fauxAssistantMessage(`No tool named ${wanted} is available.`);
      if (known.name !== wanted && eveNameOfFlueName(known.name) !== wanted) return fauxAssistantMessage([fauxToolCall(known.name, {})], { stopReason: 'toolUse' });
      let args: Record<string, unknown>;
      try {
        args = tool[2] ? (JSON.parse(tool[2]) as Record<string, unknown>) : {};
      } catch {
        return fauxAssistantMessage(`The arguments for ${tool[1]} are not valid JSON.`);
      }
      return fauxAssistantMessage([fauxToolCall(known.name, args)], { stopReason: 'toolUse' });
    }
    const sleep = /^\/sleep\s+(\d+)/.exec(text);
    if (sleep) {
      const characters = Math.max(1, Math.round((Number(sleep[1]) / 1000) * TOKENS_PER_SECOND)) * CHARS_PER_TOKEN;
      return fauxAssistantMessage('z'.repeat(characters - 1) + '.');
    }
    const think = /^\/think\s+(.*)$/s.exec(text);
    if (think) return fauxAssistantMessage([fauxThinking(`Considering ${think[1]} step by step.`), fauxText(`Thought about ${think[1]}.`)]);
    const json = /^\/json\s+(.+)$/m.exec(text);
    if (json && text.startsWith('/json')) return fauxAssistantMessage(json[1]!.trim());
    if (text.startsWith('/fail')) return fauxAssistantMessage([], { stopReason: 'error', errorMessage: 'The scripted model failed on purpose.' });
    return fauxAssistantMessage(`Echo: ${text}${images > 0 ? ` [${images} image${images > 1 ? 's' : ''}]` : ''}`);
  };
  // Compaction can make two model calls at once; keep more than one response queued.
  faux.setResponses(Array.from({ length: 4 }, () => respond));
  return { provider: withoutPromptCache(faux.provider), model: SCRIPTED_MODEL };
}

type FauxProvider = ReturnType<typeof fauxProvider>['provider'];

/**
 * The faux provider keeps each session's last prompt, for as long as it lives, to estimate prompt
 * cache reads (some 4 KiB a session): a long-running demo or a soak would grow with every session.
 * The scripted model asks for no caching, so it keeps none.
 */
function withoutPromptCache(provider: FauxProvider): FauxProvider {
  return new Proxy(provider, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if ((property !== 'stream' && property !== 'streamSimple') || typeof value !== 'function') return value;
      return (model: unknown, context: unknown, options?: Record<string, unknown>) => Reflect.apply(value, target, [model, context, { ...options, cacheRetention: 'none' }]);
    },
  });
}
