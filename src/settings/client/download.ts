/**
 * "Download my data": the user's export (GET /export, NDJSON closed by a signed seal) saved as a
 * file. Fetched with the page's bearer token (a plain link could not carry it), then handed to the
 * browser as a download from a blob URL.
 */
export async function downloadMyData(token: string, button: HTMLButtonElement, state: HTMLElement): Promise<void> {
  button.disabled = true;
  state.textContent = 'Preparing your data…';
  try {
    const response = await fetch(new URL('/export', location.href), { headers: { authorization: `Bearer ${token}` } });
    if (!response.ok) {
      const body = (await response.json().catch(() => null)) as { errors?: { message?: string }[] } | null;
      throw new Error(body?.errors?.[0]?.message ?? `The download failed (HTTP ${response.status}).`);
    }
    const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'community-export.ndjson';
    const url = URL.createObjectURL(await response.blob());
    const link = Object.assign(document.createElement('a'), { href: url, download: name });
    link.click();
    // The click has started the download; the object URL is no longer needed after this turn.
    setTimeout(() => URL.revokeObjectURL(url), 0);
    state.textContent = `Downloaded ${name}. Its last line is signed, so anyone can check nothing was changed.`;
  } catch (error) {
    state.textContent = (error as Error).message;
  } finally {
    button.disabled = false;
  }
}
