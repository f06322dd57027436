/**
 * One request's abort signal: aborted after `timeoutMs`, or when `deadline` is (close's time ran
 * out). `done` drops the timer and the listener, so a long-lived sender keeps none per request.
 */
export function requestSignal(deadline: AbortSignal, timeoutMs: number): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const onDeadline = () => controller.abort(deadline.reason);
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms (requestTimeoutMs)`)), timeoutMs);
  if (deadline.aborted) onDeadline();
  else deadline.addEventListener('abort', onDeadline, { once: true });
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer);
      deadline.removeEventListener('abort', onDeadline);
    },
  };
}
