import { EventApiError } from '../../../functions/domain/ingest/event-api';
import type { PrivacyMessage, PrivacyReceipt } from '../../../functions/domain/privacy/privacy';
import { type PrivacyRequestPorts, takePrivacyRequest } from '../../../functions/domain/privacy/request';

const UUID = '0B9F8C6A-1C2D-4E5F-8A9B-0C1D2E3F4A5B';

function world(submit: (receipt: PrivacyReceipt, message: PrivacyMessage) => Promise<void> = async () => undefined) {
  const submitted: [PrivacyReceipt, PrivacyMessage][] = [];
  const failures: [string, unknown][] = [];
  let ids = 0;
  const ports: PrivacyRequestPorts = {
    requests: {
      submit: async (receipt, message) => {
        submitted.push([receipt, message]);
        await submit(receipt, message);
      },
    },
    newRequestId: () => `r-${++ids}`,
    failed: (receipt, error) => failures.push([receipt.request_id, error]),
  };
  return { ports, submitted, failures };
}

const request = (body: unknown) => ({ appId: 'app_1', companyId: 'com_1', body, receivedMs: 5 });

describe('takePrivacyRequest', () => {
  it('keeps a receipt and queues the install lower-cased under a fresh request id', async () => {
    const { ports, submitted, failures } = world();
    const receipt = await takePrivacyRequest(ports, request({ install_uuid: UUID }));
    expect(receipt).toMatchObject({ request_id: 'r-1', app_id: 'app_1', company_id: 'com_1', received_ms: 5, state: 'queued' });
    expect(submitted).toEqual([
      [receipt, { version: 1, request_id: 'r-1', app_id: 'app_1', company_id: 'com_1', install_uuid: UUID.toLowerCase() }],
    ]);
    expect(failures).toEqual([]);
  });

  it('refuses a body that names no install before it takes an id or writes anything', async () => {
    const { ports, submitted } = world();
    await expect(takePrivacyRequest(ports, request({ install_uuid: 'nope' }))).rejects.toMatchObject({ code: 'bad_install_uuid' });
    await expect(takePrivacyRequest(ports, request([UUID]))).rejects.toMatchObject({ code: 'bad_json' });
    expect(submitted).toEqual([]);
    expect(ports.newRequestId()).toBe('r-1');
  });

  it('tells of a request the store or queue refused, then refuses it as queue_write_failed', async () => {
    const down = new Error('queue unavailable');
    const { ports, failures } = world(async () => {
      throw down;
    });
    const taken = takePrivacyRequest(ports, request({ install_uuid: UUID }));
    await expect(taken).rejects.toBeInstanceOf(EventApiError);
    await expect(taken).rejects.toMatchObject({ code: 'queue_write_failed' });
    expect(failures).toEqual([['r-1', down]]);
  });
});
