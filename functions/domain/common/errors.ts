/**
 * A failure the client is told about: the status, the documented code that becomes the body
 * {"error": code}, and any headers the answer needs (Allow, Retry-After, Cache-Control). The
 * HTTP edge renders it in one place (httpErrors in functions/shared/http.ts); anything that is
 * not a ServiceError is a bare 500, so nothing internal ever reaches a client.
 */
export class ServiceError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(code);
    this.name = 'ServiceError';
  }
}
