/** The error a call that must fail rejects with (an AWS SDK error carries its HTTP status); throws if it succeeds. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail');
}
