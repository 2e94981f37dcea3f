/**
 * A background loop's failure, logged once until its message changes, and its recovery once:
 * the loops retry every round, and a line a round would bury the log.
 */
export function failureLog(
  log: (line: string) => void,
  failedLine: (message: string) => string,
  recoveredLine: string,
): { ok(): void; failed(e: unknown): void } {
  let last: string | undefined;
  return {
    ok() {
      if (last !== undefined) log(recoveredLine);
      last = undefined;
    },
    failed(e) {
      const message = e instanceof Error ? e.message : String(e);
      if (message !== last) log(failedLine(message));
      last = message;
    },
  };
}
