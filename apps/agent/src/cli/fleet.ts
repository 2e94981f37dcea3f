/**
 * `blkheat fleet`: parse flags, start the fleet server (fleet/service.ts), stop it on
 * SIGINT/SIGTERM. Prints "blkheat fleet: listening on <url>" on stdout once it serves (scripts
 * and tests wait for it); diagnostics go to stderr.
 */
import { fleetHelpText, parseFleetArgs } from '../fleet/options.js';
import { startFleet } from '../fleet/service.js';
import { UsageError } from '../service/flags.js';

export { summary } from '../fleet/options.js';

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

export async function run(argv: string[]): Promise<number> {
  let options;
  try {
    options = parseFleetArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`blkheat fleet: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (options === 'help') {
    console.log(fleetHelpText());
    return 0;
  }
  let fleet;
  try {
    fleet = await startFleet(options, log);
  } catch (e) {
    console.error(`blkheat fleet: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const tokenHint = options.token ? ' (open the dashboard with #token=<token> after the URL)' : '';
  return new Promise<number>((resolve) => {
    const onSignal = (sig: NodeJS.Signals): void => {
      log(`fleet: ${sig}: closing clients`);
      fleet.stop().then(
        () => resolve(0),
        () => resolve(1),
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    console.log(`blkheat fleet: listening on ${fleet.url}${tokenHint}`);
  });
}
