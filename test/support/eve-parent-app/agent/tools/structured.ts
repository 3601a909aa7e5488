import { defineWorkflowTool } from 'eve/tools';
import { z } from 'zod';

/** Asks the remote agent `flue` for a structured answer: one turn with an outputSchema. */
export default defineWorkflowTool({
  description: 'Asks the flue agent for a weather report as data.',
  inputSchema: z.object({ message: z.string() }),
  async execute({ message }, ctx) {
    'use workflow';
    const flue = ctx.agent('flue');
    const response = await flue.send(message, {
      outputSchema: {
        type: 'object',
        properties: { city: { type: 'string' }, temperature: { type: 'number' } },
        required: ['city', 'temperature'],
        additionalProperties: false,
      },
    });
    const result = await response.result();
    return { status: result.status, data: result.data ?? null, error: result.error?.message ?? null };
  },
});
