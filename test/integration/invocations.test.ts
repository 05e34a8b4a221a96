import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from '../../functions/shared/clients/sqs';
import { abandonInvocations, acceptInvocations, trackInvocation } from '../../local/invocations';
import { sleep, waitFor } from '../support/wait-for';

/**
 * Abandoning invocations at shutdown (local/invocations.ts), against an SQS endpoint that answers
 * only when the test says: the call in flight lands, nothing after it starts or returns.
 */
let server: Server;
const held: { request: IncomingMessage; answer: () => void }[] = [];
const arrived: string[] = [];

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      arrived.push(String(JSON.parse(body).QueueUrl).split('/').pop() as string);
      held.push({
        request,
        answer: () => {
          if (response.headersSent) return;
          response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
          response.end('{"Attributes":{}}');
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  process.env.AWS_ENDPOINT_URL_SQS = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
});
afterAll(async () => {
  for (const { answer } of held) answer();
  sqsClient().destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const attributes = (queue: string) =>
  sqsClient().send(
    new GetQueueAttributesCommand({ QueueUrl: `${process.env.AWS_ENDPOINT_URL_SQS}/000000000000/${queue}`, AttributeNames: ['All'] }),
  );
const until = (condition: () => boolean) => waitFor(condition, { timeoutMs: 10_000, intervalMs: 5, what: 'the held calls' });

describe('abandoning invocations at shutdown', () => {
  it('waits for the call in flight, then neither returns it nor starts another, and starts no new invocation', async () => {
    const seen: string[] = [];
    const invocation = trackInvocation(async () => {
      await attributes('first');
      seen.push('first answered');
      await attributes('second');
      seen.push('second answered');
    });
    await until(() => held.length === 1);

    let abandoned = false;
    const abandoning = abandonInvocations(5_000).then(() => (abandoned = true));
    // Fixed waits here show that something does not happen, which only time passing can show.
    await sleep(100);
    // The call in flight is waited for: it lands whole before the emulators would close.
    expect(abandoned).toBe(false);
    held[0]!.answer();
    await abandoning;

    const later = trackInvocation(async () => {
      seen.push('a new invocation ran');
      await attributes('later');
    });
    await sleep(200);
    expect(seen).toEqual([]);
    expect(arrived).toEqual(['first']);
    // Neither settles: an abandoned invocation stops where it was.
    const settled = await Promise.race([
      invocation.then(
        () => 'settled',
        () => 'settled',
      ),
      later.then(
        () => 'settled',
        () => 'settled',
      ),
      new Promise((resolve) => setTimeout(() => resolve('pending'), 100)),
    ]);
    expect(settled).toBe('pending');
  });

  it('leaves calls outside any invocation alone, and runs invocations again once they are accepted again', async () => {
    const outside = attributes('outside');
    await until(() => held.length === 2);
    held[1]!.answer();
    await expect(outside).resolves.toMatchObject({ Attributes: {} });

    acceptInvocations();
    const invocation = trackInvocation(async () => {
      await attributes('again');
      return 'done';
    });
    await until(() => held.length === 3);
    held[2]!.answer();
    await expect(invocation).resolves.toBe('done');
    expect(arrived).toEqual(['first', 'outside', 'again']);
  });
});
