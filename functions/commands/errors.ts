import { LinkDomainFullError, LinkDomainTakenError } from '../adapters/link-domain-store';
import { AppStoreIdTakenError, NotFoundError } from '../adapters/tenant-store';
import { ServiceError } from '../domain/common/errors';
import { FxRatesFileError } from '../domain/fx/rates-file';
import { LinkConfigError } from '../domain/links/link-config';
import { PostbackConfigError } from '../domain/partner-postbacks/config';
import { UserExistsError } from '../domain/team/users';
import { TargetError, UsageError } from './command';
import { CostImportError } from './cost-commands';
import { SkanSchemaFileError } from './skan-commands';

export interface ErrorAnswer {
  /** The console's HTTP status; the CLI exits 2 for 400 usage errors and 1 otherwise. */
  readonly status: number;
  readonly message: string;
  /** An error the operator can act on, said in their words; anything else is a bug, printed with its name. */
  readonly expected: boolean;
  /** The flag at fault, when a usage error names one (`lookback-days`): the console shows the refusal beside its field. */
  readonly flag?: string;
}

/** How the CLI and the console both say what went wrong with a command: one table, one wording. */
export function errorAnswer(error: unknown): ErrorAnswer {
  const err = error as Error;
  if (error instanceof UsageError)
    return { status: 400, message: err.message, expected: true, ...(error.flag === undefined ? {} : { flag: error.flag }) };
  if (
    error instanceof LinkConfigError ||
    error instanceof PostbackConfigError ||
    error instanceof CostImportError ||
    error instanceof FxRatesFileError ||
    error instanceof SkanSchemaFileError
  )
    return { status: 400, message: err.message, expected: true };
  if (error instanceof NotFoundError) return { status: 404, message: err.message, expected: true };
  if (
    error instanceof AppStoreIdTakenError ||
    error instanceof LinkDomainTakenError ||
    error instanceof LinkDomainFullError ||
    error instanceof UserExistsError
  )
    return { status: 409, message: err.message, expected: true };
  if (error instanceof ServiceError) return { status: error.statusCode, message: error.code, expected: true };
  if (error instanceof TargetError) return { status: 502, message: err.message, expected: true };
  return { status: 500, message: `${err.name}: ${err.message}`, expected: false };
}
