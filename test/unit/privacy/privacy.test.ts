import { createHash } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { MessageQueue } from '../../../functions/adapters/message-queue';
import { PrivacyRequests } from '../../../functions/adapters/privacy-store';
import type { EventApiError } from '../../../functions/domain/ingest/event-api';
import { installHash, type PrivacyMessage, parseDeletionRequest, privacyRequest } from '../../../functions/domain/privacy/privacy';

const UUID = '0B9F8C6A-1C2D-4E5F-8A9B-0C1D2E3F4A5B';

function codeOf(body: unknown): string | undefined {
  try {
    parseDeletionRequest(body);
  } catch (error) {
    return (error as EventApiError).code;
  }
  return undefined;
}

describe('privacy request', () => {
  it('takes an install_uuid of any case and names the install lower-cased', () => {
    expect(parseDeletionRequest({ install_uuid: UUID })).toBe(UUID.toLowerCase());
  });

  it.each([
    [[UUID], 'bad_json'],
    [null, 'bad_json'],
    ['text', 'bad_json'],
    [{}, 'bad_install_uuid'],
    [{ install_uuid: 5 }, 'bad_install_uuid'],
    [{ install_uuid: 'nope' }, 'bad_install_uuid'],
  ])('refuses %p with %s', (body, code) => {
    expect(codeOf(body)).toBe(code);
  });

  it('keeps only a hash of the install in the receipt and the install itself in the message', () => {
    const { receipt, message } = privacyRequest({ requestId: 'r-1', appId: 'app_1', companyId: 'com_1', installUuid: UUID, receivedMs: 5 });
    const hash = createHash('sha256').update(UUID.toLowerCase()).digest('hex');
    expect(installHash(UUID)).toBe(hash);
    expect(receipt).toEqual({
      request_id: 'r-1',
      app_id: 'app_1',
      company_id: 'com_1',
      install_hash: hash,
      app_install: `app_1#${hash}`,
      received_ms: 5,
      state: 'queued',
    });
    expect(message).toEqual({ version: 1, request_id: 'r-1', app_id: 'app_1', company_id: 'com_1', install_uuid: UUID.toLowerCase() });
    expect(JSON.stringify(receipt)).not.toContain(UUID.toLowerCase());
  });
});

describe('privacy requests store', () => {
  const db = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  const { receipt, message } = privacyRequest({ requestId: 'r-1', appId: 'app_1', companyId: 'com_1', installUuid: UUID, receivedMs: 5 });
  const store = () => new PrivacyRequests('receipts', new MessageQueue<PrivacyMessage>('https://sqs.local/privacy'));

  beforeEach(() => {
    db.reset();
    sqs.reset();
  });

  it('stores the receipt, then queues the request', async () => {
    db.on(PutCommand).resolves({});
    sqs.on(SendMessageCommand).resolves({});
    await store().submit(receipt, message);
    expect(db.commandCalls(PutCommand)[0].args[0].input).toMatchObject({ TableName: 'receipts', Item: receipt });
    expect(JSON.parse(sqs.commandCalls(SendMessageCommand)[0].args[0].input.MessageBody!)).toEqual(message);
  });

  it('takes the receipt back when the request cannot be queued', async () => {
    db.on(PutCommand).resolves({}).on(DeleteCommand).resolves({});
    sqs.on(SendMessageCommand).rejects(new Error('queue down'));
    await expect(store().submit(receipt, message)).rejects.toThrow('queue down');
    expect(db.commandCalls(DeleteCommand)[0].args[0].input).toEqual({ TableName: 'receipts', Key: { request_id: 'r-1' } });
  });

  it('queues nothing when the receipt cannot be stored', async () => {
    db.on(PutCommand).rejects(new Error('table down'));
    await expect(store().submit(receipt, message)).rejects.toThrow('table down');
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });
});
