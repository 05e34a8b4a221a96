import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoClient } from '../shared/clients';
import { newLinkId } from '../domain/keys';
import type { App, AppDestinations } from './tenant-store';

/** A tracking link: which app and partner a click belongs to and where each platform goes. */
export interface LinkConfig extends AppDestinations {
  link_id: string;
  app_id: string;
  company_id: string;
  partner: string;
  campaign?: string;
  honeypot: boolean;
  /** ISO 3166-1 alpha-2 codes; when set, only these countries pass the edge filter. */
  countries_allow?: string[];
  /** ISO 3166-1 alpha-2 codes dropped by the edge filter. */
  countries_block?: string[];
  lookback_days: number;
  created_ms: number;
}

export interface NewLink extends AppDestinations {
  partner: string;
  campaign?: string;
  honeypot?: boolean;
  countries_allow?: string[];
  countries_block?: string[];
  lookback_days?: number;
}

export class LinkStore {
  constructor(
    private readonly tableName: string,
    private readonly db: DynamoDBDocumentClient = dynamoClient(),
  ) {}

  async create(app: App, input: NewLink): Promise<LinkConfig> {
    const link: LinkConfig = {
      link_id: newLinkId(),
      app_id: app.app_id,
      company_id: app.company_id,
      partner: input.partner,
      campaign: input.campaign,
      honeypot: input.honeypot ?? false,
      ios_url: input.ios_url,
      android_url: input.android_url,
      web_url: input.web_url,
      countries_allow: input.countries_allow,
      countries_block: input.countries_block,
      lookback_days: input.lookback_days ?? app.lookback_days,
      created_ms: Date.now(),
    };
    await this.db.send(
      new PutCommand({ TableName: this.tableName, Item: link, ConditionExpression: 'attribute_not_exists(link_id)' }),
    );
    return link;
  }

  async byId(linkId: string): Promise<LinkConfig | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: { link_id: linkId } }));
    return Item as LinkConfig | undefined;
  }
}
