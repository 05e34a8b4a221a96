import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { type AdServicesAnswers, answersKey, parseAnswers } from '../domain/adservices/answers';
import type { AnswersStore } from '../domain/adservices/enrich';
import type { AnswersErasure } from '../domain/privacy/drain';
import { s3Client } from '../shared/clients/s3';
import { removeVersions } from './audit-eraser';

/** S3 answers 409 to a conditional write while another write of the key is in flight; it asks for a retry. */
const CONFLICT_ATTEMPTS = 3;
const CONFLICT_WAIT_MS = 50;

/**
 * Apple's answers to an audit object's AdServices tokens, beside the object in the audit bucket
 * (`<audit key>.adservices.json`, docs/ios.md section 4). Written once (If-None-Match: *), so two
 * deliveries of one message that both asked Apple keep the first's answers, the ones the
 * aggregator reads whichever delivery hands the object on.
 */
export class AdServicesAnswerStore implements AnswersStore {
  constructor(protected readonly bucket: string) {}

  async get(auditKey: string): Promise<AdServicesAnswers | undefined> {
    try {
      const object = await s3Client().send(new GetObjectCommand({ Bucket: this.bucket, Key: answersKey(auditKey) }));
      return parseAnswers(await (object.Body as { transformToString(): Promise<string> }).transformToString());
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'NoSuchKey' || name === 'NotFound') return undefined;
      throw error;
    }
  }

  async putOnce(auditKey: string, answers: AdServicesAnswers): Promise<AdServicesAnswers> {
    for (let attempt = 1; ; attempt++) {
      try {
        await s3Client().send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: answersKey(auditKey),
            Body: JSON.stringify(answers),
            ContentType: 'application/json',
            IfNoneMatch: '*',
          }),
        );
        return answers;
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status === 412) {
          const stored = await this.get(auditKey);
          if (stored) return stored;
        }
        if (status !== 409 || attempt >= CONFLICT_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, CONFLICT_WAIT_MS * attempt));
      }
    }
  }
}

/**
 * What a privacy deletion does to an answers object (docs/privacy.md): put again without the
 * install's answers, or deleted; as for its audit object, older versions go too (AWS only).
 */
export class AdServicesAnswerEraser extends AdServicesAnswerStore implements AnswersErasure {
  async rewrite(auditKey: string, answers: AdServicesAnswers): Promise<void> {
    const key = answersKey(auditKey);
    await s3Client().send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: JSON.stringify(answers), ContentType: 'application/json' }),
    );
    await removeVersions(this.bucket, key, { keepLatest: true });
  }

  async delete(auditKey: string): Promise<void> {
    const key = answersKey(auditKey);
    await removeVersions(this.bucket, key, { keepLatest: false });
    await s3Client().send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}
