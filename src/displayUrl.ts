/**
 * How Refract shows a URL it was configured with (Solana RPC, external prover, Redis) in error
 * messages, `/health` and logs: scheme, host and port only, with `/…` when the URL has more. Node
 * providers put their key in user info (`https://user:key@…`), in the path (`/v2/<key>`,
 * `/api-key/<key>`) or in a query parameter of any name (`?api-key=`, `?token=`), so everything after
 * the authority is withheld: the host says which node failed, nothing else is needed to act on it.
 * A string that does not parse as a URL shows as `(invalid url)`.
 *
 * Examples: `https://user:pw@rpc.example.com:8899/v2/KEY?x=1` → `https://rpc.example.com:8899/…`;
 * `http://127.0.0.1:8899` and `http://127.0.0.1:8899/` → `http://127.0.0.1:8899`.
 */
export function displayUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '(invalid url)';
  }
  const more = (u.pathname !== '/' && u.pathname !== '') || u.search !== '' || u.hash !== '';
  return `${u.protocol}//${u.host}${more ? '/…' : ''}`;
}
