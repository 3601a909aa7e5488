import { describe, expect, test } from '@jest/globals';
import { defineFlueConnection, modelFacingListing, ProvidedArgumentError, selectsTool, withProvidedArguments, type ToolRules } from '@eve-flue/connections';

describe('tool filters', () => {
  test('an array and `allow` are allowlists, `block` leaves out', () => {
    expect(['a', 'b'].filter((t) => selectsTool(['a'], t))).toEqual(['a']);
    expect(['a', 'b'].filter((t) => selectsTool({ allow: ['b'] }, t))).toEqual(['b']);
    expect(['a', 'b'].filter((t) => selectsTool({ block: ['b'] }, t))).toEqual(['a']);
    expect(['a', 'b'].filter((t) => selectsTool(undefined, t))).toEqual(['a', 'b']);
  });

  test.each([
    [{ allow: ['a'], block: ['b'] }, '`tools` must be `{ allow: [...] }` or `{ block: [...] }` (exactly one)'],
    [{ block: 'a' }, '`tools.block` must be an array of tool names'],
    [{ allow: ['a', 'a'] }, '`tools.allow` lists a tool twice'],
  ])('defineFlueConnection refuses tools %j', (tools, message) => {
    expect(() => defineFlueConnection({ name: 'x', url: 'https://x.example.com/mcp', tools: tools as never })).toThrow(message);
  });
});

describe('provided arguments', () => {
  const rules: ToolRules = { name: 'crm', tools: { block: ['drop'] }, toolCall: { providedArguments: { tenant: ({ principal }: { principal?: string }) => `t-${principal}`, region: 'eu' } } };

  test('the listing: filtered, provided keys gone from properties and required', () => {
    const listed = {
      tools: [
        { name: 'find', inputSchema: { type: 'object', properties: { q: { type: 'string' }, tenant: { type: 'string' } }, required: ['q', 'tenant'] } },
        { name: 'drop', inputSchema: { type: 'object' } },
      ],
      nextCursor: 'c',
    };
    expect(modelFacingListing(listed, rules)).toEqual({ tools: [{ name: 'find', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }], nextCursor: 'c' });
  });

  test('values replace the model’s; the context is asked for only when a function needs it', async () => {
    let asked = 0;
    const context = async () => {
      asked++;
      return { principal: 'ann', sessionId: 's', toolName: 'find', callId: 'call_1' };
    };
    expect(await withProvidedArguments(rules, { q: 'x', tenant: 'evil' }, context)).toEqual({ q: 'x', tenant: 't-ann', region: 'eu' });
    expect(asked).toBe(1);
    expect(await withProvidedArguments({ name: 'c', toolCall: { providedArguments: { region: 'eu' } } }, {}, context)).toEqual({ region: 'eu' });
    expect(asked).toBe(1);
  });

  test('a resolver that throws, or gives no JSON value, fails the call naming the key, never a value', async () => {
    const context = async () => ({ toolName: 't', callId: 'c' });
    const failing: ToolRules = { name: 'c', toolCall: { providedArguments: { secret: () => { throw new Error('vault says s3cr3t'); } } } };
    const error = await withProvidedArguments(failing, {}, context).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProvidedArgumentError);
    expect((error as Error).message).toBe('[eve-flue] connection "c": provided argument `secret` could not be resolved');
    const undefinedValue: ToolRules = { name: 'c', toolCall: { providedArguments: { k: () => undefined } } };
    await expect(withProvidedArguments(undefinedValue, {}, context)).rejects.toThrow('provided argument `k` must resolve to a JSON value');
  });
});
