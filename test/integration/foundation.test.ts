import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { type LocalStack, startLocalStack } from '../support/local-stack';

describe('the local runtime', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await startLocalStack();
  });

  afterAll(async () => {
    await stack.stop();
  });

  it('answers GET /health with 200 and the four bindings ok', async () => {
    const response = await fetch(`${stack.baseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ok',
      bindings: { relational_store: 'ok', object_store: 'ok', key_value_store: 'ok', queues: 'ok' },
    });
  });

  it('answers 503 naming object_store while the S3 emulator is down, and 200 once it is back', async () => {
    await stack.emulators.stopS3();
    try {
      const response = await fetch(`${stack.baseUrl}/health`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { status: string; bindings: Record<string, string> };
      expect(body.status).toBe('failing');
      expect(body.bindings.object_store).not.toBe('ok');
      expect(body.bindings.relational_store).toBe('ok');
      expect(body.bindings.key_value_store).toBe('ok');
      expect(body.bindings.queues).toBe('ok');
    } finally {
      await stack.emulators.startS3();
    }
    expect((await fetch(`${stack.baseUrl}/health`)).status).toBe(200);
  });

  it('answers an unknown report with 404 unknown_report', async () => {
    const response = await fetch(`${stack.baseUrl}/api/v1/reports/nope`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'unknown_report' });
  });

  it('answers a POST to a known report with 405 method_not_allowed before any authentication', async () => {
    const response = await fetch(`${stack.baseUrl}/api/v1/reports/attribution`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(await response.json()).toEqual({ error: 'method_not_allowed' });
  });

  it('answers an unknown path with a JSON 404', async () => {
    const response = await fetch(`${stack.baseUrl}/no/such/path?x=1`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({ error: 'not_found' });
  });

  it('writes endpoints.json with every table, the bucket and every queue', async () => {
    const { endpoints } = stack;
    expect(Object.keys(endpoints.tables)).toEqual(expect.arrayContaining(['tenants', 'counters', 'clicks', 'aggregates']));
    expect(endpoints.bucket).toBeTruthy();
    expect(Object.keys(endpoints.queues).sort()).toEqual(['aggregation', 'enrichment', 'postbacks', 'privacy']);
    const sqs = new SQSClient({ region: endpoints.region, endpoint: endpoints.sqs });
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: endpoints.queues.aggregation, AttributeNames: ['RedrivePolicy'] }),
    );
    expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toMatchObject({ maxReceiveCount: 5 });
    sqs.destroy();
  });
});

describe('a restart over the same data directory', () => {
  it('keeps tenants and queued messages, and seeds the demo only once', async () => {
    const first = await startLocalStack({ seed: true });
    const { dataDir } = first;
    let company: Awaited<ReturnType<TenantStore['createCompany']>>;
    try {
      expect(first.demoCreated).toBe(true);
      company = await new TenantStore(first.endpoints.tables.tenants).createCompany({ name: 'Persisted' });
      const sqs = new SQSClient({ region: 'us-east-1', endpoint: first.endpoints.sqs });
      await sqs.send(new SendMessageCommand({ QueueUrl: first.endpoints.queues.privacy, MessageBody: 'kept' }));
      sqs.destroy();
    } finally {
      await first.close();
    }

    const second = await startLocalStack({ dataDir, seed: true });
    try {
      expect(second.demoCreated).toBe(false);
      expect(second.demo?.company_key).toBe(first.demo?.company_key);
      const found = await new TenantStore(second.endpoints.tables.tenants).companyByKey(company.company_key);
      expect(found?.name).toBe('Persisted');
      expect((await new TenantStore(second.endpoints.tables.tenants).companyByKey(first.demo!.company_key))?.name).toBe('Demo Company');
      const again = new SQSClient({ region: 'us-east-1', endpoint: second.endpoints.sqs });
      const { Messages } = await again.send(new ReceiveMessageCommand({ QueueUrl: second.endpoints.queues.privacy, WaitTimeSeconds: 1 }));
      expect(Messages?.[0]?.Body).toBe('kept');
      again.destroy();
    } finally {
      await second.stop();
    }
  });
});
