/**
 * `blkheat serve`: parse flags, start the agent (service/agent.ts), stop it on SIGINT/SIGTERM.
 * Prints one line "blkheat serve: listening on <url>" on stdout once it serves (scripts and
 * tests wait for it); diagnostics go to stderr.
 */
import { checkDiskNames, createCollector } from '../collector/index.js';
import { startAgent } from '../service/agent.js';
import { helpText, parseServeArgs } from '../service/options.js';
import { listeningLine, log, startServerCommand } from './server-command.js';

export { summary } from '../service/options.js';

export async function run(argv: string[]): Promise<number> {
  const started = await startServerCommand(
    {
      name: 'serve',
      parse: parseServeArgs,
      help: helpText,
      start: (options) => startAgent(options, { createCollector, checkDisks: checkDiskNames, log }),
    },
    argv,
  );
  if (typeof started === 'number') return started;
  const { options, running: agent } = started;

  return new Promise<number>((resolve) => {
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals): void => {
      if (++signals > 1) {
        log(`serve: ${sig} again, exiting without a clean shutdown`);
        process.exit(130);
      }
      log(`serve: ${sig}: detaching probes, flushing history, closing clients`);
      agent.stop().then(
        () => resolve(0),
        (e: unknown) => {
          log(`serve: shutdown failed: ${e instanceof Error ? e.message : String(e)}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // Only now: whoever waits for this line may signal at once, and must find the handlers.
    console.log(listeningLine('serve', agent.url, options.token));
  });
}
