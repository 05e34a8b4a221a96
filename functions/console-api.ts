import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { ChangeLogStore } from './adapters/change-log-store';
import { storeLookup } from './commands/command-scope';
import { commandsFor, consoleRequest, MAX_CONSOLE_BODY_BYTES, memberView, runConsoleCommand } from './commands/console-call';
import { errorAnswer } from './commands/errors';
import { ServiceError } from './domain/common/errors';
import { POSTBACK_MACROS } from './domain/partner-postbacks/template';
import { type Member, memberOfClaims } from './domain/team/members';
import { requireEnv, resourceName } from './shared/config';
import { type HttpResult, httpErrors, json } from './shared/http';
import { logger } from './shared/observability';

/**
 * The deployed console's API (docs/console.md, "The deployed console"; ADR 0007): POST
 * /api/command runs a command of the console's registry (functions/commands/registry.ts) for the signed-in member, GET /api/me says
 * who they are and what they may run. API Gateway's JWT authorizer has verified the token's
 * signature, issuer, audience and expiry against the user pool before this runs; the function
 * checks issuer, audience and token_use again (the claims it reads are the ID token's), then the
 * role and company on every command (functions/commands/console-call.ts).
 */
const issuer = requireEnv('CONSOLE_ISSUER');
const clientId = requireEnv('CONSOLE_CLIENT_ID');
const changes = new ChangeLogStore(resourceName.table('changes'));

type ConsoleEvent = APIGatewayProxyEventV2WithJWTAuthorizer;

/** The member the authorizer's claims name; 401 unauthenticated for a token this pool's client did not issue as an ID token. */
export function memberOfEvent(event: ConsoleEvent, expected = { issuer, clientId }): Member {
  const claims = event.requestContext.authorizer?.jwt?.claims ?? {};
  if (claims.iss !== expected.issuer || claims.aud !== expected.clientId || claims.token_use !== 'id') {
    throw new ServiceError(401, 'unauthenticated');
  }
  return memberOfClaims(claims);
}

export async function consoleApi(event: ConsoleEvent): Promise<HttpResult> {
  const member = memberOfEvent(event);
  const headers = { 'cache-control': 'no-store' };
  if (event.routeKey === 'GET /api/me') {
    return json(
      200,
      {
        member: memberView(member),
        commands: commandsFor(member),
        target: { base_url: deployedTarget().baseUrl, stack: null },
        postback_macros: POSTBACK_MACROS,
      },
      headers,
    );
  }
  const raw = event.body ?? '';
  const body = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (Buffer.byteLength(body) > MAX_CONSOLE_BODY_BYTES) return json(413, { error: 'body_too_large' }, headers);
  const request = consoleRequest(parseJson(body));
  if (!request) return json(400, { error: 'expected {"command": "...", "flags": {...}}' }, headers);
  try {
    return json(
      200,
      await runConsoleCommand({ member, ...request }, { target: deployedTarget(), lookUp: storeLookup(), changes }),
      headers,
    );
  } catch (error) {
    const answer = errorAnswer(error);
    if (!answer.expected) throw error;
    return json(answer.status, { error: answer.message, ...(answer.flag === undefined ? {} : { flag: answer.flag }) }, headers);
  }
}

/** In AWS the commands run in the function, on its own environment's tables, bucket and queues. */
const deployedTarget = () => ({ baseUrl: requireEnv('PUBLIC_BASE_URL') });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// The console's JWT claims are read by the handler; errors render as every endpoint's do (httpErrors).
export const handler = middy<ConsoleEvent, HttpResult>(consoleApi)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(httpErrors() as unknown as MiddlewareObj<ConsoleEvent, HttpResult>);
