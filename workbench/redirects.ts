/**
 * Where the browser may be sent after sign-in: a path of this site only. The value is resolved the
 * way a browser resolves it (the WHATWG URL parser: `\` read as `/`, tabs and newlines dropped)
 * against this site's own origin, and kept only when the result has that origin; what is sent on is
 * the resolved path, never the raw text. `/\evil.example/` and `/%09/evil.example/` resolve to
 * another origin and give `/`.
 */
const SELF = 'http://workbench.invalid';

export function sameSiteNext(next: string | undefined): string {
  if (!next || !next.startsWith('/')) return '/';
  let url: URL;
  try {
    url = new URL(next, SELF);
  } catch {
    return '/';
  }
  if (url.origin !== SELF || url.username || url.password) return '/';
  return `${url.pathname}${url.search}${url.hash}`;
}
