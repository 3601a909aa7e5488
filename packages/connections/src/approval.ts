import type { Logger } from '@eve-flue/session-contract';
import type { ApprovalCall, ApprovalDecision, FlueConnectionDefinition } from './definition.ts';

/**
 * What a connection's approval policy says of one call. A policy that fails refuses the call:
 * an unclear answer never runs a gated tool.
 */
export async function decideApproval(definition: Readonly<FlueConnectionDefinition>, call: ApprovalCall, logger: Logger): Promise<ApprovalDecision> {
  const policy = definition.approval ?? 'never';
  if (policy === 'never') return 'not-applicable';
  if (policy === 'always') return 'user-approval';
  return Promise.resolve()
    .then(() => policy(call))
    .catch((error: unknown) => {
      logger.warn({ err: error, connection: definition.name, tool: call.toolName }, 'the approval policy failed; the call is denied');
      return 'denied' as const;
    });
}
