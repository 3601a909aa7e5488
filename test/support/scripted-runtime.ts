import { setTimeout as delay } from 'node:timers/promises';
import { TurnError, type AgentDescription, type AgentRuntime, type TurnContext, type UserMessage } from '@eve-flue/session-contract';

/**
 * A test agent for the session API: deterministic replies without a model.
 * - `/approve <text>`: asks for a tool approval, then reports what the person chose;
 * - `/sleep <ms>`: streams `.` every 20 ms for that long (cancel and steering tests);
 * - `/hold`: the same, until the test calls `release()`;
 * - `/fail`: the step fails and the turn fails;
 * - anything else: `Echo: <message>` in two deltas.
 */
export class ScriptedRuntime implements AgentRuntime {
  readonly cleared: string[] = [];
  readonly compacted: string[] = [];
  readonly seen: string[] = [];
  readonly #released = Promise.withResolvers<void>();

  /** Ends every `/hold` turn, now and to come. */
  release(): void {
    this.#released.resolve();
  }

  describe(): AgentDescription {
    return {
      name: 'scripted',
      modelId: 'scripted/test',
      modelProvider: 'scripted',
      tools: [{ name: 'connection__demo__echo', description: 'Echo text', inputSchema: { type: 'object' } }],
      connections: [{ name: 'demo', url: 'http://127.0.0.1:1/mcp', description: 'Demo MCP server', hasAuthorization: false }],
    };
  }

  async runTurn(turn: TurnContext, message: UserMessage): Promise<void> {
    this.seen.push(message.text);
    const [command, ...rest] = message.text.split(' ');
    const argument = rest.join(' ');
    await turn.startStep('scripted/test');
    if (command === '/fail') {
      await turn.failStep({ code: 'MODEL_CALL_FAILED', message: 'The scripted model failed on purpose.' });
      throw new TurnError('MODEL_CALL_FAILED', 'The scripted model failed on purpose.');
    }
    if (command === '/sleep' || command === '/hold') {
      // Stops early for a steering message (the turn then runs it) or a cancel.
      const interrupted = turn.waitForSteering().then(() => true);
      const over = command === '/sleep' ? delay(Number(argument)) : this.#released.promise;
      let done = false;
      void over.then(() => (done = true));
      while (!done) {
        await turn.emit('message.appended', { messageDelta: '.' });
        if (await Promise.race([interrupted, delay(20).then(() => false)])) {
          await turn.completeStep({ finishReason: 'other' });
          return;
        }
      }
      await this.#reply(turn, command === '/sleep' ? 'Slept.' : 'Released.');
      return;
    }
    if (command === '/approve') {
      const action = { kind: 'tool-call' as const, callId: 'call_1', toolName: 'connection__demo__echo', input: { text: argument } };
      await turn.emit('actions.requested', { actions: [action] });
      const [resolution] = await turn.requestInput([
        {
          kind: 'tool-approval',
          prompt: `Run echo with "${argument}"?`,
          action,
          options: [
            { id: 'approve', label: 'Approve', style: 'primary' },
            { id: 'deny', label: 'Deny', style: 'danger' },
          ],
          display: 'confirmation',
        },
      ]);
      if (turn.signal.aborted) return;
      await turn.startStep('scripted/test');
      const approved = resolution?.outcome === 'approved';
      await turn.emit('action.result', {
        result: { kind: 'tool-result', callId: 'call_1', toolName: action.toolName, output: approved ? `echo: ${argument}` : 'denied', isError: !approved },
        status: approved ? 'completed' : 'rejected',
        ...(approved ? {} : { error: { code: 'TOOL_EXECUTION_DENIED', message: 'The person denied the call.' } }),
      });
      await this.#reply(turn, approved ? `Approved: echo: ${argument}` : 'Denied.');
      return;
    }
    await this.#reply(turn, `Echo: ${message.text}`);
  }

  async #reply(turn: TurnContext, text: string): Promise<void> {
    const half = Math.ceil(text.length / 2);
    await turn.emit('message.appended', { messageDelta: text.slice(0, half) });
    await turn.emit('message.appended', { messageDelta: text.slice(half) });
    await turn.emit('message.completed', { message: text, finishReason: 'stop' });
    await turn.completeStep({ finishReason: 'stop' });
  }

  async clearContext(sessionId: string): Promise<void> {
    this.cleared.push(sessionId);
  }

  async compactContext(sessionId: string) {
    this.compacted.push(sessionId);
    return { modelId: 'scripted/test' };
  }
}
