import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DaySummary, DayWindow, InvalidTotal, SkanItem, SkanReportRows, SkanReportWriter } from '../domain/skan/skan-report';
import { dynamoClient } from '../shared/clients/dynamo';
import { queryAll } from './query-pages';

/** An item per counted postback of a day: pk `<app_id>#skanpb#<day>`, sk the transaction id. */
const itemsPk = (appId: string, day: string) => `${appId}#skanpb#${day}`;
/** The day summaries (sk `<day>`) and the days' invalid totals (sk `<day>#invalid`). */
const summaryPk = (appId: string) => `${appId}#skan`;
const INVALID_SUFFIX = '#invalid';

/**
 * The SKAN report in the aggregates table (docs/ios.md section 3). The invalid total of a day
 * lives in an item of its own, `postbacks` and `expires_at` (the table's TTL attribute): two
 * numbers whatever the junk names, so it never grows, and it goes with the day's last invalid
 * record. Items of the former layout (`r:<row key>` counters, issue 19) are read as nothing.
 */
export class SkanReportStore implements SkanReportWriter, SkanReportRows {
  constructor(private readonly table: string) {}

  async putItem(appId: string, item: SkanItem): Promise<void> {
    await dynamoClient().send(
      new PutCommand({ TableName: this.table, Item: { ...item, pk: itemsPk(appId, item.day), sk: item.transaction_id } }),
    );
  }

  async addWritten(appId: string, day: string): Promise<void> {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: summaryPk(appId), sk: day },
        UpdateExpression: 'ADD written :one',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  }

  async addInvalid(appId: string, day: string, expiresAt: number): Promise<void> {
    // Postbacks arrive in time order, so the latest expiry is nearly always the one being set; a
    // late, earlier one only shortens the total's life by the seconds between them.
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: summaryPk(appId), sk: `${day}${INVALID_SUFFIX}` },
        UpdateExpression: 'ADD postbacks :one SET expires_at = :expires',
        ExpressionAttributeValues: { ':one': 1, ':expires': expiresAt },
      }),
    );
  }

  /** One query: the window's summaries and invalid items sort together, `<day>` then `<day>#invalid`. */
  async summaries(appId: string, window: DayWindow) {
    const items = await queryAll<Record<string, unknown>>({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
      ExpressionAttributeValues: { ':pk': summaryPk(appId), ':first': window.firstDay, ':last': `${window.lastDay}${INVALID_SUFFIX}` },
      ConsistentRead: true,
    });
    const days = new Map<string, DaySummary>();
    const invalid = new Map<string, InvalidTotal>();
    for (const item of items) {
      const sk = String(item.sk);
      if (sk.endsWith(INVALID_SUFFIX)) {
        if (typeof item.postbacks === 'number' && typeof item.expires_at === 'number')
          invalid.set(sk.slice(0, -INVALID_SUFFIX.length), { postbacks: item.postbacks, expiresAt: item.expires_at });
      } else {
        days.set(sk, {
          written: Number(item.written ?? 0),
          ...(typeof item.built === 'number' ? { built: item.built } : {}),
          ...(typeof item.rows === 'string' ? { rows: item.rows } : {}),
        });
      }
    }
    return { days, invalid };
  }

  async items(appId: string, day: string): Promise<readonly SkanItem[]> {
    const items = await queryAll<Record<string, unknown>>({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': itemsPk(appId, day) },
      ConsistentRead: true,
    });
    return items.map(({ pk: _pk, sk: _sk, ...item }) => item as unknown as SkanItem);
  }

  /**
   * The rebuilt rows, on the condition that `written` has not moved since the items were read:
   * otherwise a postback came meanwhile and the next read rebuilds. A failure of any kind (an
   * overlarge day among them) leaves the summary stale, which costs a later read, never a wrong row.
   */
  async saveSummary(appId: string, day: string, written: number, rows: string): Promise<void> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: summaryPk(appId), sk: day },
          UpdateExpression: 'SET #built = :written, #rows = :rows',
          ConditionExpression: '#written = :written',
          ExpressionAttributeNames: { '#built': 'built', '#rows': 'rows', '#written': 'written' },
          ExpressionAttributeValues: { ':written': written, ':rows': rows },
        }),
      );
    } catch {
      // A condition failure (written moved) or any other: the summary stays stale, rebuilt later.
    }
  }
}
