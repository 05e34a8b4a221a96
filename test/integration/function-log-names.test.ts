// Each log line of a local run names the function that wrote it, as in AWS, where each function
// has its own process. Locally every handler shares one process, one logger and one metrics
// instance (functions/shared/observability.ts), and their invocations overlap: an aggregator
// line must not take the name of the report query or the batch that ran meanwhile.

import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { eventBatchRequest, type SdkEvent } from '../../client/event-client';
import { dynamoClient } from '../../functions/shared/clients';
import { currentFunction } from '../../local/function-context';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { captureLogs, type LogCapture } from '../support/log-capture';
import { credentialsOf, post } from './ingest-support';

// Every line the handlers can write, metrics included: they read these when they first load, after this.
process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
process.env.POWERTOOLS_METRICS_DISABLED = 'false';

let stack: LocalStack;
let tenant: Tenant;
let logs: LogCapture;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant({ plan: 'paid' });
});
afterAll(async () => {
  logs?.restore();
  await stack?.stop();
});

/**
 * Holds the first DynamoDB call the named function makes from now on until `release()`, so a test
 * can run another function in the middle of one invocation.
 */
function holdFirstCallOf(client: DynamoDBDocumentClient, functionName: string) {
  let reached!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding = true;
  const name = `hold-${functionName}-${randomUUID()}`;
  client.middlewareStack.add(
    (next) => async (args) => {
      if (holding && currentFunction()?.name === functionName) {
        holding = false;
        reached();
        await released;
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { held, release, stop: () => client.middlewareStack.remove(name) };
}

/** A Powertools log line (JSON with a level) or an EMF metrics line, with the function running when it was written. */
interface Written {
  readonly writer: string | undefined;
  readonly line: Record<string, any>;
}

it('names in each log line the function that wrote it, while an aggregator and a report query overlap', async () => {
  const events: SdkEvent[] = [
    { event_id: 'install', event_name: 'install', install_uuid: randomUUID(), ts_ms: Date.now(), platform: 'ios' },
  ];
  const request = eventBatchRequest(credentialsOf(tenant), { events, sent_at_ms: Date.now() });
  expect((await post(stack.baseUrl, '/event', request)).status).toBe(200);
  await stack.pollers.drain();

  logs = captureLogs({ attribute: () => currentFunction()?.name });
  // The same bytes again: the aggregator gets the audit object a second time and logs that it
  // was aggregated already, after a report query has started and finished in its middle.
  const hold = holdFirstCallOf(dynamoClient(), 'aggregator');
  try {
    expect((await post(stack.baseUrl, '/event', request)).status).toBe(200);
    await hold.held;
    const report = await fetch(`${stack.baseUrl}/api/v1/reports/events`, { headers: { authorization: `Bearer ${tenant.serverKey}` } });
    expect(report.status).toBe(200);
    hold.release();
    await stack.pollers.drain();
  } finally {
    hold.stop();
    hold.release();
  }

  const written: Written[] = logs.attributed().flatMap(({ line, attribution }) => {
    try {
      return [{ writer: attribution, line: JSON.parse(line) as Record<string, any> }];
    } catch {
      return [];
    }
  });
  const logLines = written.filter(({ line }) => typeof line.level === 'string');
  // The run logged what this test is about: the aggregator's line.
  expect(logLines.filter(({ line }) => line.message === 'audit object already aggregated').map(({ line }) => line.function_name)).toEqual([
    'aggregator',
  ]);
  expect(
    logLines
      .filter(({ writer, line }) => line.function_name !== writer)
      .map(({ writer, line }) => `${writer} wrote: ${JSON.stringify(line)}`),
  ).toEqual([]);

  // Each invocation publishes its own metrics, not another function's.
  const metricNames = (line: Record<string, any>) =>
    (line._aws?.CloudWatchMetrics ?? []).flatMap((set: { Metrics: { Name: string }[] }) => set.Metrics.map((metric) => metric.Name));
  const metricsBy = (writer: string) => written.filter((entry) => entry.writer === writer).flatMap(({ line }) => metricNames(line));
  expect(metricsBy('ingest')).toContain('EventsAccepted');
  expect(metricsBy('aggregator')).toContain('DuplicateDeliveries');
  expect(written.filter(({ writer }) => writer !== 'aggregator').flatMap(({ line }) => metricNames(line))).not.toContain(
    'DuplicateDeliveries',
  );
});
