/** Full-jitter exponential backoff (AWS' "Exponential Backoff and Jitter"), never less than the server's Retry-After. */
export function backoffDelay(attempt: number, options: { initial: number; max: number }, retryAfterSeconds: number | null): number {
  const ceiling = Math.min(options.max, options.initial * 2 ** attempt);
  const jittered = Math.random() * ceiling;
  return retryAfterSeconds === null ? jittered : Math.max(retryAfterSeconds * 1000, jittered);
}

/** Retry-After in seconds (a number or an HTTP date), or null when absent or unreadable. */
export function retryAfter(header: string | null): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}
