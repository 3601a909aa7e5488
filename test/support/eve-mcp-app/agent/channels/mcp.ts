import { oauthResource, withAuthChallenges, type AuthFn } from 'eve/channels/auth';
import { mcpChannel } from 'eve/channels/mcp';

// Two callers by bearer token, as the bridge test's bearerTokens({...}) admits them; tokens and
// the advertised issuer come from the test that starts this app.
const tokens = new Map<string, string>(JSON.parse(process.env.EVE_MCP_FIXTURE_TOKENS ?? '{}'));
const byToken: AuthFn<Request> = (request) => {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '');
  const principalId = match && tokens.get(match[1]!);
  return principalId ? { attributes: {}, authenticator: 'fixture-bearer', principalId, principalType: 'service' } : null;
};

export default mcpChannel({
  auth: oauthResource(withAuthChallenges(byToken, [{ scheme: 'Bearer' }]), {
    issuer: process.env.EVE_MCP_FIXTURE_ISSUER ?? 'https://issuer.invalid',
    scopes: ['agent:invoke'],
  }),
});
