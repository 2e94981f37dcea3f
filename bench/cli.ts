/**
 * The bench scripts' command lines, parsed one way: `-h`/`--help` prints the script's usage and
 * exits 0, and a flag it does not know (or one missing its value) is said in one line with the
 * usage and exit code 2, not as Node's parse_args stack (bench/fleet-scale, bench/agent and
 * bench/soak answered `--help` so). Each script checks its values' ranges itself, with
 * `usageError` for the same exit.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Says `message` and the usage on stderr, and exits 2 (a bad command line). */
export function usageError(name: string, usage: string, message: string): never {
  console.error(`${name}: ${message}\n\n${usage}`);
  process.exit(2);
}

/** The values of the script's flags (`options`, strict), or the usage printed and the process exited. */
export function benchArgs<const O extends Options>(
  name: string,
  usage: string,
  options: O,
  o: { readonly args?: readonly string[]; readonly allowNegative?: boolean } = {},
) {
  const args = [...(o.args ?? process.argv.slice(2))];
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    process.exit(0);
  }
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false, allowNegative: o.allowNegative ?? false }).values;
  } catch (err) {
    return usageError(name, usage, err instanceof Error ? err.message : String(err));
  }
}
