import type { AgentDescription } from '@eve-flue/session-contract';

const owner = { kind: 'application' } as const;

/** A module source owned by the application, as agent-info v5 describes one. */
function moduleSource(logicalPath: string, moduleId: string) {
  return {
    logicalPath,
    owner,
    sourceId: logicalPath,
    sourceKind: 'module' as const,
    binding: {
      logicalPath,
      owner,
      backing: { kind: 'programmatic' as const, moduleId, registryId: 'eve-flue-bridge', revision: '1' },
    },
  };
}

/**
 * The agent-info payload (`kind: "eve-agent-info"`, version 5: the version `eve/client` 0.80
 * accepts) for a Flue agent served by the bridge. Tools carry their Eve names.
 */
export function agentInfo(agent: AgentDescription, mode: 'development' | 'production') {
  return {
    kind: 'eve-agent-info',
    version: 5,
    mode,
    agent: {
      agentRoot: '.',
      appRoot: '.',
      name: agent.name,
      nodeId: agent.name,
      config: moduleSource(`agents/${agent.name}`, agent.name),
      model: { id: agent.modelId, routing: { kind: 'external', provider: agent.modelProvider } },
    },
    capabilities: { devRoutes: false },
    channels: { routes: [], shadowed: [] },
    composition: { disabled: [], shadowed: [] },
    connections: agent.connections.map((connection) => ({
      ...moduleSource(`connections/${connection.name}`, connection.name),
      connectionName: connection.name,
      description: connection.description,
      hasApproval: false,
      hasAuthorization: connection.hasAuthorization,
      hasHeaders: false,
      protocol: 'mcp',
      url: connection.url,
    })),
    diagnostics: { discoveryErrors: 0, discoveryWarnings: 0 },
    hooks: [],
    instructions: { dynamic: [], static: [] },
    kernelEffects: [],
    memories: [],
    remoteAgents: { entries: [], total: 0 },
    sandbox: { logicalPath: 'sandbox', owner, sourceId: 'sandbox', sourceKind: 'markdown', revisionHash: 'none' },
    schedules: [],
    skills: { dynamic: [], static: [] },
    subagents: { local: [], total: 0 },
    tools: {
      dynamic: [],
      static: agent.tools.map((tool) => ({
        ...moduleSource(`tools/${tool.name}`, tool.name),
        name: tool.name,
        description: tool.description,
        hasAuth: false,
        hasExecute: true,
        hasModelOutputProjection: false,
        hasOutputSchema: false,
        inputSchema: tool.inputSchema ?? { type: 'object' },
        requiresApproval: false,
      })),
    },
    workspace: { resourceRoot: null, rootEntries: [] },
  };
}
