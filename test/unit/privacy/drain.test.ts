import { AuditObjectError } from '../../../functions/domain/audit/decode';
import type { AuditLine } from '../../../functions/domain/audit/types';
import { type DrainPorts, eraseInstall, MAX_ROWS_PER_TABLE, type PostbackItemKey } from '../../../functions/domain/privacy/drain';
import { installKey, type PrivacyMessage } from '../../../functions/domain/privacy/privacy';

const GONE = '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
const KEPT = '7d0e1f2a-3b4c-4d5e-8f60-718293a4b5c6';
const message: PrivacyMessage = { version: 1, request_id: 'r-1', app_id: 'app_1', company_id: 'com_1', install_uuid: GONE };

const line = (index: number, fields: Partial<AuditLine>): AuditLine => ({
  index,
  status: 'rejected',
  reason: 'bad_install_uuid',
  received_ms: 1,
  client_ip: '198.51.100.7',
  sdk_version: null,
  event: {},
  ...fields,
});

/** One install's partition naming one audit object, that object, and the install's postback items. */
function world(postbackCount: number) {
  const objects = new Map<string, readonly AuditLine[]>([
    [
      'audit/o',
      [
        line(0, { status: 'accepted', reason: undefined, install_uuid: GONE, event: { install_uuid: GONE } }),
        line(1, { event: { install_uuid: ` ${GONE.toUpperCase()}` }, device_hash: 'h' }),
        line(2, { event: { install_uuid: [`{${GONE}}`] } }),
        line(3, { status: 'accepted', reason: undefined, install_uuid: KEPT, event: { install_uuid: KEPT } }),
        line(4, { event: { install_uuid: ` ${KEPT}` } }),
      ],
    ],
  ]);
  const postbacks: PostbackItemKey[] = Array.from({ length: postbackCount }, (_, n) => ({ pk: 'app_1', sk: `log#${n}` }));
  const asked: string[] = [];
  const ports: DrainPorts = {
    queue: { receive: async () => [], remove: async () => undefined, carry: async () => undefined, release: async () => undefined },
    installs: {
      firstItems: async () => ({ items: [{ pk: `app_1#${GONE}`, sk: 'a#audit/o', audit_key: 'audit/o' }], more: false }),
      deleteItems: async () => undefined,
    },
    clicks: { deleteMany: async (ids) => ids.length },
    auditObjects: {
      lines: async (key) => {
        const lines = objects.get(key);
        if (!lines) throw new AuditObjectError('missing_object', key);
        return [...lines];
      },
    },
    auditErasure: { delete: async (key) => void objects.delete(key), rewrite: async (key, lines) => void objects.set(key, lines) },
    postbacks: {
      ofInstall: async (key, limit) => {
        asked.push(key);
        return { keys: postbacks.slice(0, limit), more: postbacks.length > limit };
      },
      deleteItems: async (keys) => void postbacks.splice(0, keys.length),
    },
    receipts: { record: async () => undefined },
    nowMs: () => 0,
    timeLeftMs: () => 600_000,
  };
  return { ports, objects, postbacks, asked };
}

describe('erasing an install', () => {
  it("erases the lines whose install_uuid, whatever its form, contains the install's UUID", async () => {
    const { ports, objects } = world(0);
    expect(await eraseInstall(ports, message)).toBe('done');
    expect(objects.get('audit/o')!.map((kept) => kept.index)).toEqual([3, 4]);
  });

  it("deletes the install's postbacks and attempts, found by its hashed key, 1,000 a run", async () => {
    const { ports, postbacks, asked } = world(MAX_ROWS_PER_TABLE + 5);
    expect(await eraseInstall(ports, message)).toBe('more');
    expect(asked).toEqual([installKey('app_1', GONE)]);
    expect(postbacks).toHaveLength(5);
    expect(await eraseInstall(ports, message)).toBe('done');
    expect(postbacks).toHaveLength(0);
  });
});
