/**
 * The access token. The agent hands it out as `…/#token=T`: a fragment is never sent to the
 * server nor written to its logs. We move it into sessionStorage (this tab only, gone when the
 * tab closes; never localStorage) and strip it from the address bar so a copied link does not
 * carry it.
 */

const KEY = 'blkheat.token';

/** Reads `#token=` from the fragment (if any), stores it, removes it from the URL. */
export function captureToken(): string | undefined {
  const hash = window.location.hash.replace(/^#/, '');
  const params = new URLSearchParams(hash);
  const fromHash = params.get('token');
  if (fromHash) {
    try {
      sessionStorage.setItem(KEY, fromHash);
    } catch {
      // Storage disabled: the token still works for this page load.
      memoryToken = fromHash;
    }
    params.delete('token');
    const rest = params.toString();
    const url = window.location.pathname + window.location.search + (rest ? `#${rest}` : '');
    window.history.replaceState(window.history.state, '', url);
  }
  return getToken();
}

let memoryToken: string | undefined;

export function getToken(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) ?? memoryToken;
  } catch {
    return memoryToken;
  }
}
