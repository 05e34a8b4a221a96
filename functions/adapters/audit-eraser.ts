import { DeleteObjectCommand, ListObjectVersionsCommand, type ListObjectVersionsCommandOutput } from '@aws-sdk/client-s3';
import { batchOfKey } from '../domain/audit/keys';
import type { AuditErasure, AuditWriter } from '../domain/audit/ports';
import type { AuditLine } from '../domain/audit/types';
import { s3Client } from '../shared/clients/s3';
import { AuditStore } from './audit-store';

const UNVERSIONED = new Set(['MethodNotAllowed', 'NotImplemented']);

/**
 * What a privacy deletion does to the audit store: an object deleted, or put again without the
 * install's lines. The bucket is versioned in AWS, so the older versions that still hold the lines
 * go too; the local emulator keeps no versions and lists none.
 */
export class AuditEraser implements AuditErasure {
  private readonly store: AuditWriter;

  constructor(private readonly bucket: string) {
    this.store = new AuditStore(bucket);
  }

  async delete(key: string): Promise<void> {
    await removeVersions(this.bucket, key, { keepLatest: false });
    // Unversioned (locally), or a delete marker on top of nothing: the plain delete does it.
    await s3Client().send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async rewrite(key: string, lines: readonly AuditLine[]): Promise<void> {
    const named = batchOfKey(key);
    if (named === undefined) throw new Error(`${key} is not an audit object key`);
    await this.store.replace(key, { ...named, receivedMs: lines[0]?.received_ms ?? 0, clientIp: lines[0]?.client_ip ?? '' }, lines);
    await removeVersions(this.bucket, key, { keepLatest: true });
  }
}

/** The key's older versions gone (all of them unless `keepLatest`); none to remove locally, where the emulator keeps none. */
export async function removeVersions(bucket: string, key: string, options: { keepLatest: boolean }): Promise<void> {
  let KeyMarker: string | undefined;
  let VersionIdMarker: string | undefined;
  do {
    let page: ListObjectVersionsCommandOutput;
    try {
      page = await s3Client().send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key, KeyMarker, VersionIdMarker }));
    } catch (error) {
      // The local emulator has no versioning and refuses the call: there are no versions to remove.
      if (UNVERSIONED.has((error as Error).name)) return;
      throw error;
    }
    const versions = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].filter(
      (version) => version.Key === key && version.VersionId && version.VersionId !== 'null' && !(options.keepLatest && version.IsLatest),
    );
    for (const version of versions)
      await s3Client().send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: version.VersionId }));
    KeyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
    VersionIdMarker = page.IsTruncated ? page.NextVersionIdMarker : undefined;
  } while (KeyMarker);
}
