/**
 * A failure the client is told about: the status, the documented code that becomes the body
 * {"error": code} (body()), and any headers the answer needs (Allow, Retry-After, Cache-Control). The
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

  /**
   * The JSON body: the code alone. The interface fixes the Reporting API's error body at that one
   * field; only the event API, whose error body the interface leaves open, adds to it
   * (EventApiError names the field at fault of a bad_batch_shape).
   */
  body(): { readonly error: string } {
    return { error: this.code };
  }
}
