import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { init, observe, useTool, type AgentFunction, type AgentProps, type DeliveredMessage, type FlueObservation, type ToolDefinition } from '@flue/runtime';
import type { PersistenceAdapter } from '@flue/runtime/adapter';
import { sqlite, type StartOptions } from '@flue/runtime/node';
import { toJsonObject } from '@eve-flue/eve-protocol';
import {
  TurnError,
  type AgentDescription,
  type AgentRuntime,
  type CompactionResult,
  type DirectToolOutcome,
  type Logger,
  type Principal,
  type PublishedTool,
  type TurnContext,
  type UserMessage,
} from '@eve-flue/session-contract';
import { displayNameOf, hasSignIn, type ConnectionRegistry, type FlueConnectionDefinition, type ParkingTurn, type SessionScope } from '@eve-flue/connections';
import { ConnectionTools, type BridgedConnection, type CallerConnections, type TurnToolCalls } from './connection-tools.ts';
import { DirectToolCalls } from './direct-tool-calls.ts';
import { OwnTools } from './own-tools.ts';
import { toDeliveredMessage } from './delivered-message.ts';
import { FlueHost } from './flue-host.ts';
import { flueStore } from './flue-store.ts';
import { InstanceDirectory, sessionOfInstance, SqliteGenerations, type GenerationStore } from './instance-directory.ts';
import { leasedConversations } from './leased-conversations.ts';
import { LiveTap } from './live-tap.ts';
import { TurnTranslator } from './turn-translator.ts';
import { SettlementWrites } from './settlement-writes.ts';
import { TurnRun, type Settlement } from './turn-run.ts';

/** A Flue agent function: the same function you would hand to Flue's own `start()`. */
export type FlueAgent = AgentFunction<AgentProps> & { agentName?: string };

export interface FlueRuntimeOptions {
  /** The agent. Do not declare bridge connections in it, nor `tools`: the bridge mounts them. */
  agent: FlueAgent;
  /**
   * The agent's own Flue tools (`defineTool`), mounted on every render with the connection tools
   * and published for direct calls (Flue has no API to read the tools a render mounts).
   */
  tools?: readonly ToolDefinition[];
  /** Model providers for Flue's `start()`; omit for Flue's built-in set. */
  providers?: StartOptions['providers'];
  /** Shown by `/eve/v1/info` until the first model call reveals the model in use. */
  modelId: string;
  connections: ConnectionRegistry;
  /** Connections resolved per caller: the caller's set, in place of `connections`, for each turn. */
  callerConnections?: CallerConnections;
  /** A connection as mounted for one session's instance. */
  mountConnection: (definition: Readonly<FlueConnectionDefinition>, session: SessionScope) => BridgedConnection;
  /** Where Flue keeps conversations (`flue.db`, unless `db` says otherwise) and the instance directory; in memory when absent. */
  dataDir?: string;
  /** Flue's persistence adapter; default: SQLite in `dataDir`, else in memory. */
  db?: PersistenceAdapter;
  /** Where each session's Flue instance generation lives; default: SQLite in `dataDir`, else in memory. */
  generations?: GenerationStore;
  /**
   * With several instances on one shared Flue store: whether this process holds a session now
   * (its lease). Flue's coordinator here then only claims and recovers the conversations of
   * sessions held here (see `leasedConversations`).
   */
  holds?: (sessionId: string) => boolean;
  /** Restart Flue in place once this many sessions were evicted, to let go of what it keeps of them (see `FlueHost`). Default 1,000. */
  restartFlueAfter?: number;
  logger: Logger;
}

/** Longest wait, when stopping, for Flue submissions to settle. */
const SETTLE_ON_CLOSE_MS = 10_000;
/** Longest wait for Flue to report a tool call before its sign-in is reported anyway. */
const TOOL_REPORT_WAIT_MS = 3_000;
const RESTART_FLUE_AFTER = 1_000;
/** Longest time new turns wait for the running ones to end before a restart of Flue is put off. */
const RESTART_DRAIN_MS = 1_000;

/**
 * Runs a Flue agent in this process behind the Eve session API: one Flue instance per Eve
 * session, one Flue submission per Eve message, Flue's runtime events turned into Eve events.
 */
export class FlueRuntime implements AgentRuntime {
  readonly #options: FlueRuntimeOptions;
  readonly #agent: FlueAgent;
  readonly #instances: InstanceDirectory;
  /** The running turn of each instance, which claims the submissions it dispatches. */
  readonly #running = new Map<string, TurnRun>();
  /** Which turn dispatched each unsettled submission: its events go there even after a newer turn starts. */
  readonly #owners = new Map<string, TurnRun>();
  /** Turns whose Flue submissions have not all settled yet: stopping waits for them. */
  readonly #unsettled = new Set<Promise<void>>();
  /** Flue's last write of a settled submission: its turn ends after it (see `SettlementWrites`). */
  readonly #writes = new SettlementWrites();
  #host: FlueHost | undefined;
  #closeTap: (() => Promise<void>) | undefined;
  #unobserve: (() => void) | undefined;
  #modelId: string;
  #modelProvider = 'external';
  #seenTools: string[] | undefined;
  /** Abort requests still being recorded by Flue: stopping waits for them. */
  readonly #aborting = new Set<Promise<void>>();
  readonly #connectionTools: ConnectionTools;
  /** The connection tools each instance's next render mounts, prepared before each dispatch. */
  readonly #prepared = new Map<string, ToolDefinition[]>();
  readonly #directCalls: DirectToolCalls;
  readonly #ownTools: OwnTools;

  private constructor(options: FlueRuntimeOptions) {
    this.#options = options;
    this.#modelId = options.modelId;
    this.#instances = new InstanceDirectory(options.generations ?? new SqliteGenerations(options.dataDir && join(options.dataDir, 'flue-instances.db')));
    this.#ownTools = new OwnTools(options.tools ?? [], options.logger);
    this.#agent = this.#bridged(options.agent);
    const callers = options.callerConnections;
    this.#directCalls = new DirectToolCalls({
      // A direct call has no session: the caller's set is resolved for their principal alone.
      connectionsFor: callers ? (principal) => callers.for(principal ? { principal } : {}) : async () => options.connections,
      mount: options.mountConnection,
      logger: options.logger,
    });
    this.#connectionTools = new ConnectionTools({
      connections: options.connections,
      ...(options.callerConnections ? { callerConnections: options.callerConnections } : {}),
      mount: options.mountConnection,
      logger: options.logger,
      onSignedIn: (instanceId, connection) => this.#running.get(instanceId)?.signedIn(connection),
      callsOf: (instanceId) => {
        const run = this.#running.get(instanceId);
        return run && toolCallsOf(run);
      },
    });
  }

  static async start(options: FlueRuntimeOptions): Promise<FlueRuntime> {
    const runtime = new FlueRuntime(options);
    const tap = new LiveTap((scope, delta) => {
      const run = runtime.#owners.get(scope.submissionId) ?? runtime.#running.get(scope.instanceId);
      run?.live(scope.submissionId, scope.turnId, delta);
    });
    runtime.#closeTap = () => tap.close();
    // Without a file, in memory: the one store every restart of Flue reopens.
    const db = options.db ?? (options.dataDir ? flueStore(join(options.dataDir, 'flue.db')) : sqlite());
    const holds = options.holds;
    runtime.#host = await FlueHost.start({
      agents: [runtime.#agent],
      // Only providers handed to the bridge can be tapped; Flue's built-ins report through observe().
      ...(options.providers ? { providers: options.providers.map((provider) => tap.wrap(provider)) } : {}),
      db: runtime.#writes.watch(holds ? leasedConversations(db, (instanceId) => holds(sessionOfInstance(instanceId))) : db),
      recycleAfter: options.restartFlueAfter ?? RESTART_FLUE_AFTER,
      drainMs: RESTART_DRAIN_MS,
      logger: options.logger,
    });
    runtime.#unobserve = observe((observation) => runtime.#observe(observation));
    return runtime;
  }

  describe(): AgentDescription {
    const names = this.#options.connections.names;
    const connectionTools = this.#options.connections.describeTools();
    const otherTools = (this.#seenTools ?? []).filter((name) => !names.origin(name) && !this.#ownTools.has(name)).map((name) => ({ name, description: '' }));
    return {
      name: this.#agent.agentName ?? this.#agent.name,
      modelId: this.#modelId,
      modelProvider: this.#modelProvider,
      tools: [...connectionTools, ...this.#ownTools.described(), ...otherTools],
      connections: this.#options.connections.definitions().map((d) => ({
        name: d.name,
        url: d.url,
        description: d.description ?? `MCP server ${d.name}`,
        hasAuthorization: hasSignIn(d),
      })),
    };
  }

  /** The config's own tools (harness tools aside) and the connection tools of `principal`'s set, callable with no turn. */
  async publishedTools(principal: Principal | undefined): Promise<PublishedTool[]> {
    return [...this.#ownTools.published(), ...(await this.#directCalls.published(principal))];
  }

  /** An own tool gets nothing of the caller: Flue's tool context has no place for a principal. */
  invokeTool(name: string, input: Record<string, unknown>, principal: Principal | undefined, signal?: AbortSignal): Promise<DirectToolOutcome> {
    return this.#ownTools.has(name) ? this.#ownTools.invoke(name, input, signal) : this.#directCalls.invoke(name, input, principal);
  }

  async runTurn(turn: TurnContext, message: UserMessage): Promise<void> {
    const run = this.#host!.run(() => this.#runTurn(turn, message));
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#unsettled.add(settled);
    void settled.finally(() => this.#unsettled.delete(settled));
    return run;
  }

  async #runTurn(turn: TurnContext, message: UserMessage): Promise<void> {
    const instanceId = await this.#instances.instanceFor(turn.sessionId);
    const handle = init(this.#agent, { id: instanceId });
    const names = this.#options.connections.names;
    const run = new TurnRun(turn, new TurnTranslator(turn, this.#modelId, (name) => names.toEve(name)));
    this.#running.set(instanceId, run);
    const abort = () => void this.#abort(instanceId);
    turn.signal.addEventListener('abort', abort, { once: true });
    const scope: SessionScope = { sessionId: turn.sessionId, turn: () => this.#parkingTurn(turn.sessionId) };
    try {
      const settlements: Promise<Settlement>[] = [];
      const dispatch = async (delivered: DeliveredMessage, idempotencyKey: string) => {
        const tools = await this.#connectionTools.prepare(instanceId, scope, turn.principal);
        // Cancelled while the connections were opened: the model must not run for it at all.
        if (turn.signal.aborted) return;
        this.#prepared.set(instanceId, tools);
        const { submissionId } = await handle.dispatch({ message: delivered, idempotencyKey });
        this.#owners.set(submissionId, run);
        const settled = run.claim(submissionId).then(async (settlement) => {
          await this.#writes.written(submissionId);
          return settlement;
        });
        settlements.push(settled.finally(() => this.#owners.delete(submissionId)));
        // Cancelled while Flue admitted it: the abort above found nothing to stop yet.
        if (turn.signal.aborted) abort();
      };
      const deliver = (m: UserMessage) => dispatch(toDeliveredMessage(m), m.deliveryId);
      await deliver(message);
      // Steering messages are dispatched to the busy instance: Flue joins them to the live
      // response at its next turn boundary, exactly Eve's steer-at-a-boundary behaviour.
      for (;;) {
        const count = settlements.length;
        const settledAll = Promise.all(settlements).then(() => 'settled' as const);
        const woke = await Promise.race([settledAll, turn.waitForSteering().then(() => 'steering' as const)]);
        if (woke === 'steering' && !turn.signal.aborted) {
          for (const m of turn.takeSteering()) await deliver(m);
          continue;
        }
        await settledAll;
        // A sign-in from a stand-in tool: the same turn goes on, with the connection's real tools.
        const signedIn = turn.signal.aborted ? [] : run.takeSignedIn();
        if (signedIn.length > 0) await dispatch(continuationAfter(signedIn.map((name) => this.#options.connections.definition(name))), `${message.deliveryId}:signed-in:${count}`);
        if (settlements.length === count) break;
      }
      const outcomes = await Promise.all(settlements);
      await run.translator.flushed();
      const failed = outcomes.find((s) => s.outcome === 'failed');
      if (failed) throw run.translator.stepError ?? new TurnError('AGENT_FAILED', `${failed.message ?? 'The agent failed.'}${this.#conflictHint(failed)}`);
      if (!turn.signal.aborted && outcomes.some((s) => s.outcome === 'aborted')) throw new TurnError('AGENT_ABORTED', 'The agent run was aborted.');
    } finally {
      turn.signal.removeEventListener('abort', abort);
      if (this.#running.get(instanceId) === run) this.#running.delete(instanceId);
    }
  }

  async clearContext(sessionId: string): Promise<void> {
    const ended = await this.#instances.instanceFor(sessionId);
    await this.#instances.advance(sessionId);
    await this.#endInstance(ended);
  }

  async compactContext(): Promise<CompactionResult> {
    throw new TurnError(
      'COMPACTION_UNSUPPORTED',
      'Flue compacts a conversation on its own when it nears the context window; it has no compaction on demand.',
    );
  }

  async endSession(sessionId: string): Promise<void> {
    const ended = await this.#instances.instanceFor(sessionId);
    this.#instances.forget(sessionId);
    this.#options.callerConnections?.forget(sessionId);
    await this.#endInstance(ended);
  }

  /**
   * Drops what this process holds for an idle session: its MCP clients (their MCP sessions
   * ended), its prepared tools, its connection sets and its place in the instance directory. Flue's conversation
   * stays in Flue's store; the next turn reopens all of it. A session whose turn runs here keeps it.
   */
  async evictSession(sessionId: string): Promise<void> {
    const instanceId = this.#instances.current(sessionId);
    if (instanceId === undefined || this.#running.has(instanceId)) return;
    this.#instances.forget(sessionId);
    this.#options.callerConnections?.forget(sessionId);
    await this.#endInstance(instanceId);
    this.#host!.released();
  }

  async #endInstance(instanceId: string): Promise<void> {
    this.#prepared.delete(instanceId);
    await this.#connectionTools.end(instanceId);
  }

  /** Flue would otherwise recover the interrupted submission and run it again, unasked. */
  async abandonTurn(sessionId: string): Promise<void> {
    await this.#abort(await this.#instances.instanceFor(sessionId));
  }

  /**
   * Stops Flue once every turn's submissions have settled (cancelled turns abort theirs): Flue
   * would otherwise leave an unsettled submission leased, and replay it after a restart.
   */
  async close(): Promise<void> {
    await Promise.all(this.#aborting);
    await Promise.race([Promise.all(this.#unsettled), new Promise((resolve) => setTimeout(resolve, SETTLE_ON_CLOSE_MS).unref())]);
    this.#unobserve?.();
    await this.#closeTap?.();
    await this.#connectionTools.endAll();
    await this.#host?.stop();
    await this.#instances.close();
  }

  #abort(instanceId: string): Promise<void> {
    const aborting = this.#host!.run(() => init(this.#agent, { id: instanceId }).abort())
      .catch((error: unknown) => this.#options.logger.warn({ err: error, instanceId }, 'Flue abort failed'))
      .finally(() => this.#aborting.delete(aborting));
    this.#aborting.add(aborting);
    return aborting;
  }

  /** Flue tells a tool name conflict only at render time: say so when the name is one the bridge mounts from its config. */
  #conflictHint(failed: Settlement): string {
    const name = failed.type === 'tool_name_conflict' ? this.#ownTools.names.find((n) => failed.message?.includes(`"${n}"`)) : undefined;
    return name === undefined ? '' : ` "${name}" is one of the config's \`tools\`, which the bridge mounts on every turn: rename it, or do not also mount it with useTool().`;
  }

  #observe(observation: FlueObservation): void {
    if (observation.type === 'turn_request' && observation.turnId) {
      const { requestedModel, providerId } = observation.request;
      this.#modelId = requestedModel.includes('/') ? requestedModel : `${providerId}/${requestedModel}`;
      this.#modelProvider = observation.request.providerId;
      this.#seenTools = observation.request.input.tools?.map((tool) => tool.name);
    }
    const submissionId = (observation as { submissionId?: string }).submissionId;
    const owner = submissionId === undefined ? undefined : this.#owners.get(submissionId);
    (owner ?? (observation.instanceId === undefined ? undefined : this.#running.get(observation.instanceId)))?.observe(observation);
  }

  /** The running turn of a session, as its connections see it: who calls, and how to park. */
  #parkingTurn(sessionId: string): ParkingTurn | undefined {
    const instanceId = this.#instances.current(sessionId);
    const run = instanceId === undefined ? undefined : this.#running.get(instanceId);
    if (!run) return undefined;
    const { turn, translator } = run;
    return {
      turnId: turn.turnId,
      ...(turn.principal ? { principal: turn.principal } : {}),
      async park(prompt) {
        if (prompt.toolName) await translator.toolStarted(prompt.toolName, TOOL_REPORT_WAIT_MS);
        await translator.flushed();
        return turn.awaitAuthorization(
          {
            name: prompt.connection,
            displayName: prompt.displayName,
            description: prompt.description,
            attemptId: prompt.attempt.id,
            url: prompt.attempt.startUrl,
            expiresAt: prompt.attempt.expiresAt,
            webhookUrl: prompt.callbackUrl,
          },
          prompt.attempt.outcome,
        );
      },
    };
  }

  /** The user's agent, plus the config's own tools and the connection tools the bridge prepared for the instance's submission. */
  #bridged(agent: FlueAgent): FlueAgent {
    const bridged = ((props: AgentProps) => {
      const instructions = agent(props);
      for (const tool of this.#ownTools.all) useTool(tool);
      for (const tool of this.#prepared.get(props.id) ?? []) useTool(tool);
      return instructions;
    }) as FlueAgent;
    bridged.agentName = agent.agentName ?? agent.name;
    return bridged;
  }
}

/** A turn's connection tool calls: their upstream results, and approvals asked of a person. */
function toolCallsOf({ turn, translator }: TurnRun): TurnToolCalls {
  return {
    record: (flueName, input, outcome) => translator.record(flueName, input, outcome),
    async approve(flueName, eveName, input) {
      await translator.toolStarted(flueName, TOOL_REPORT_WAIT_MS);
      const callId = translator.claimCallId(flueName, input, 'approval') ?? `call_${randomUUID()}`;
      await translator.flushed();
      const [resolution] = await turn.requestInput([
        {
          kind: 'tool-approval',
          prompt: `Allow ${eveName}?`,
          action: { kind: 'tool-call', callId, toolName: eveName, input: toJsonObject(input) },
          options: [
            { id: 'approve', label: 'Approve', style: 'primary' },
            { id: 'deny', label: 'Deny', style: 'danger' },
          ],
          display: 'confirmation',
        },
      ]);
      return resolution?.outcome === 'approved';
    },
    async callIdOf(flueName, input) {
      await translator.toolStarted(flueName, TOOL_REPORT_WAIT_MS);
      return translator.claimCallId(flueName, input, 'arguments') ?? `call_${randomUUID()}`;
    },
  };
}

/** What the model reads after a sign-in from a stand-in tool, when the same turn goes on. */
function continuationAfter(definitions: Readonly<{ name: string; displayName?: string }>[]): DeliveredMessage {
  const names = definitions.map((d) => displayNameOf(d)).join(', ');
  return {
    kind: 'signal',
    type: 'connection.signed-in',
    attributes: { connections: definitions.map((d) => d.name).join(',') },
    body: `The person signed in to ${names}: its tools are offered now. Carry on with their request.`,
  };
}
