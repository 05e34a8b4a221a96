import { WebSdk, type WebSdkConfig } from './web-sdk.js';

/**
 * The one-file script-tag build (dist/attribution.js): `Attribution.start({...})` on the page.
 * It is built without gzip (the compressor is a third of the 10 KB budget): batches go as JSON,
 * at most 50 events, well under fetch keepalive's 64 KiB.
 */
export const start = (config: WebSdkConfig): Promise<WebSdk> => WebSdk.start({ ...config, gzipFrom: Number.POSITIVE_INFINITY });
