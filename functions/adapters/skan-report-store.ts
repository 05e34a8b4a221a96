import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DaySummary, DayWindow, SkanItem, SkanReportRows, SkanReportWriter } from '../domain/skan/skan-report';
import { dynamoClient } from '../shared/clients/dynamo';
import { queryAll } from './query-pages';

/** An item per counted postback of a day: pk `<app_id>#skanpb#<day>`, sk the transaction id. */
const itemsPk = (appId: string, day: string) => `${appId}#skanpb#${day}`;
/** The day summaries (sk `<day>`) and the days' invalid counters (sk `<day>#invalid`). */
const summaryPk = (appId: string) => `${appId}#skan`;
const INVALID_SUFFIX = '#invalid';
/** An invalid counter's attribute: this prefix and the row key, so it never meets pk or sk. */
const INVALID_PREFIX = 'r:';

/**
 * The SKAN report in the aggregates table (docs/ios.md section 3). The invalid counters live in
 * an item of their own per day, not on the day summary: anybody can send invalid postbacks naming
 * any row, and a summary that junk grew to DynamoDB's 400 KB item limit would refuse the
 * `written` ADD of every genuine postback of that day.
 */
export class SkanReportStore implements SkanReportWriter, SkanReportRows {
  constructor(private readonly table: string) {}

  async putItem(appId: string, item: SkanItem): Promise<void> {
    await dynamoClient().send(
      new PutCommand({ TableName: this.table, Item: { ...item, pk: itemsPk(appId, item.day), sk: item.transaction_id } }),
    );
  }

  async addWritten(appId: string, day: string): Promise<void> {
    await this.add(summaryPk(appId), day, 'written');
  }

  async addInvalid(appId: string, day: string, rowKey: string): Promise<void> {
    await this.add(summaryPk(appId), `${day}${INVALID_SUFFIX}`, `${INVALID_PREFIX}${rowKey}`);
  }

  private async add(pk: string, sk: string, attribute: string): Promise<void> {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk, sk },
        UpdateExpression: 'ADD #n :one',
        ExpressionAttributeNames: { '#n': attribute },
        ExpressionAttributeValues: { ':one': 1 },
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
    const invalid = new Map<string, Map<string, number>>();
    for (const item of items) {
      const sk = String(item.sk);
      if (sk.endsWith(INVALID_SUFFIX)) {
        const counters = new Map<string, number>();
        for (const [name, value] of Object.entries(item)) {
          if (name.startsWith(INVALID_PREFIX)) counters.set(name.slice(INVALID_PREFIX.length), Number(value));
        }
        invalid.set(sk.slice(0, -INVALID_SUFFIX.length), counters);
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
