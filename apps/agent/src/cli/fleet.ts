/**
 * `blkheat fleet`: parse flags, start the fleet server (fleet/service.ts), stop it on
 * SIGINT/SIGTERM. Prints "blkheat fleet: listening on <url>" on stdout once it serves (scripts
 * and tests wait for it); diagnostics go to stderr.
 */
import { fleetHelpText, parseFleetArgs } from '../fleet/options.js';
import { startFleet } from '../fleet/service.js';
import { listeningLine, log, startServerCommand } from './server-command.js';

export { summary } from '../fleet/options.js';

export async function run(argv: string[]): Promise<number> {
  const started = await startServerCommand(
    { name: 'fleet', parse: parseFleetArgs, help: fleetHelpText, start: (options) => startFleet(options, log) },
    argv,
  );
  if (typeof started === 'number') return started;
  const { options, running: fleet } = started;
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
    console.log(listeningLine('fleet', fleet.url, options.token));
  });
}
