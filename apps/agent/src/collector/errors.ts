/** The collector's one error type: what failed and, where it helps, what to do. */
export class CollectorError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'CollectorError';
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
