import { type EventClaim, type InstallHead, type InstallStore, installPk, SK } from '../domain/aggregation/install-state';
import type { AttributionDecision } from '../domain/attribution/decision';
import type { FirstLaunchRecord, FirstLaunchStore } from '../domain/attribution/first-launch';

type FirstLaunchItem = FirstLaunchRecord & { pk: string; sk: string };

/**
 * The first-launch answers, one small item in the install's own partition of the installs table
 * (sk `first_launch`), written once by the conditional put the aggregator's claims use; and the
 * aggregator's decision of the install, read from its head and the head's `e#` item. Every read is
 * consistent: a repeat right after the first answer must find it.
 */
export class FirstLaunchAnswers implements FirstLaunchStore {
  /** The installs table (DynamoInstallStore), or its in-memory twin in unit tests. */
  constructor(private readonly installs: Pick<InstallStore, 'get' | 'claimItem'>) {}

  async first(appId: string, installUuid: string): Promise<FirstLaunchRecord | undefined> {
    const item = await this.installs.get<FirstLaunchItem>(installPk(appId, installUuid), SK.firstLaunch);
    return item && recordOf(item);
  }

  async keep(record: FirstLaunchRecord): Promise<FirstLaunchRecord> {
    return recordOf(await this.installs.claimItem({ pk: installPk(record.app_id, record.install_uuid), sk: SK.firstLaunch, ...record }));
  }

  async counted(appId: string, installUuid: string): Promise<AttributionDecision | undefined> {
    const pk = installPk(appId, installUuid);
    const head = await this.installs.get<InstallHead>(pk, SK.head);
    if (!head) return undefined;
    return (await this.installs.get<EventClaim>(pk, SK.event(head.member)))?.decision;
  }
}

function recordOf({ pk: _pk, sk: _sk, ...record }: FirstLaunchItem): FirstLaunchRecord {
  return record;
}
