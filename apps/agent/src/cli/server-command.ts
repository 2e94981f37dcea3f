/**
 * What `serve` and `fleet` do alike before they serve: parse the flags (a UsageError is exit 2),
 * print --help (exit 0), start (a failure is exit 1), and say where they listen. Diagnostics go
 * to stderr with a timestamp; the one "listening on" line goes to stdout (scripts and tests wait
 * for it).
 */
import { UsageError } from '../service/flags.js';

/** A diagnostic line on stderr, timestamped. */
export function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

export interface ServerCommand<O, S> {
  /** The subcommand's name, as in `blkheat <name>`. */
  readonly name: string;
  parse(argv: string[]): O | 'help';
  help(): string;
  start(options: O): Promise<S>;
}

/** The command started, or the exit code it ends with before serving. */
export async function startServerCommand<O, S>(command: ServerCommand<O, S>, argv: string[]): Promise<{ options: O; running: S } | number> {
  let options;
  try {
    options = command.parse(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`blkheat ${command.name}: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (options === 'help') {
    console.log(command.help());
    return 0;
  }
  try {
    return { options, running: await command.start(options) };
  } catch (e) {
    console.error(`blkheat ${command.name}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

/** The line that says the command serves (printed once its signal handlers are in place). */
export function listeningLine(name: string, url: string, token: string | undefined): string {
  const tokenHint = token ? ' (open the dashboard with #token=<token> after the URL)' : '';
  return `blkheat ${name}: listening on ${url}${tokenHint}`;
}
