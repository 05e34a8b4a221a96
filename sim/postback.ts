import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ADATTRIBUTIONKIT_TEST_KID, adAttributionKitTestPrivateKey, skadnetworkTestPrivateKey } from '../local/skan-test-key';
import { type Coarse, type ConversionType, type Delivery, type PostbackWindow, postbackBody } from './skan';

/**
 * `npx tsx sim/postback.ts --app-store-id N --ad-network-id X [flags]`: one Apple postback, signed
 * with the keys the local runtime trusts beside Apple's (local/skan-test-key.ts), printed as the
 * JSON body Apple would POST to /skan-postback. The same signing as the simulator's (sim/skan.ts);
 * the README's iOS tour uses it. A deployed stack trusts Apple's keys alone: there it is invalid.
 */

const USAGE = `usage: npx tsx sim/postback.ts --app-store-id N --ad-network-id X [flags]

  --kind K               skadnetwork (SKAdNetwork 4.0, the default) or adattributionkit
  --source-identifier S  the campaign's source identifier (default 5239)
  --window W             postback-sequence-index 0, 1 or 2 (default 0)
  --fine N | --coarse V  the conversion value: 0 to 63, or low|medium|high (default none)
  --redownload           a redownload (AdAttributionKit: --conversion-type redownload|re-engagement)
  --conversion-type T    AdAttributionKit's conversion-type (default download)
  --transaction-id ID    the transaction-id / postback-identifier (default: a new UUID)
  --tampered             signed over another source identifier: the signature fails`;

export function postbackOf(argv: string[]): Record<string, unknown> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      kind: { type: 'string', default: 'skadnetwork' },
      'app-store-id': { type: 'string' },
      'ad-network-id': { type: 'string' },
      'source-identifier': { type: 'string', default: '5239' },
      window: { type: 'string', default: '0' },
      fine: { type: 'string' },
      coarse: { type: 'string' },
      redownload: { type: 'boolean', default: false },
      'conversion-type': { type: 'string' },
      'transaction-id': { type: 'string' },
      tampered: { type: 'boolean', default: false },
    },
  });
  const kind = values.kind;
  if (kind !== 'skadnetwork' && kind !== 'adattributionkit') throw new Error('--kind must be skadnetwork or adattributionkit');
  const appStoreId = values['app-store-id'];
  if (appStoreId === undefined || !/^\d{1,20}$/.test(appStoreId)) throw new Error('--app-store-id must be 1 to 20 digits');
  const adNetworkId = values['ad-network-id'];
  if (adNetworkId === undefined) throw new Error('--ad-network-id is required');
  const window = Number(values.window);
  if (window !== 0 && window !== 1 && window !== 2) throw new Error('--window must be 0, 1 or 2');
  const fine = values.fine === undefined ? undefined : Number(values.fine);
  if (fine !== undefined && !(Number.isInteger(fine) && fine >= 0 && fine <= 63)) throw new Error('--fine must be 0 to 63');
  const coarse = values.coarse;
  if (coarse !== undefined && !['low', 'medium', 'high'].includes(coarse)) throw new Error('--coarse must be low, medium or high');
  if (fine !== undefined && coarse !== undefined) throw new Error('give --fine or --coarse, not both');
  const conversion = (values['conversion-type'] ?? (values.redownload ? 'redownload' : 'download')) as ConversionType;
  if (!['download', 'redownload', 're-engagement'].includes(conversion))
    throw new Error('--conversion-type must be download, redownload or re-engagement');
  const delivery: Delivery = {
    postback: {
      kind,
      id: values['transaction-id'] ?? randomUUID(),
      appId: appStoreId,
      unknownApp: false,
      adNetworkId,
      sourceIdentifier: values['source-identifier'],
      window: window as PostbackWindow,
      fidelity: 1,
      conversion,
      value: fine !== undefined ? { fine } : coarse !== undefined ? { coarse: coarse as Coarse } : undefined,
    },
    tampered: values.tampered,
    phase: 0,
  };
  return postbackBody(delivery, {
    skadnetwork: skadnetworkTestPrivateKey(),
    adAttributionKit: adAttributionKitTestPrivateKey(),
    kid: ADATTRIBUTIONKIT_TEST_KID,
  });
}

if (require.main === module) {
  try {
    process.stdout.write(`${JSON.stringify(postbackOf(process.argv.slice(2)))}\n`);
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
}
