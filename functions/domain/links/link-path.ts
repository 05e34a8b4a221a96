/** `/l/<link_id>`, one segment: the paths CloudFront's `/l/*` behavior sends the redirect's function URL. */
const LINK_PATH = /^\/l\/([^/]+)$/;

/**
 * The link id in a request's raw path (issue 41: a function URL has no route, so no path
 * parameters). The one segment after `/l/`, percent-decoded as API Gateway decodes a path
 * parameter. Any other path (`/l/`, `/l/a/b`, a malformed escape) has no link id: '' is what
 * followLink answers as an unknown link, without a look-up.
 */
export function linkIdFromPath(rawPath: string): string {
  const segment = LINK_PATH.exec(rawPath)?.[1];
  if (segment === undefined) return '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}
