/**
 * `blkheat serve`: parse flags, start the agent (service/agent.ts), stop it on SIGINT/SIGTERM.
 * Prints one line "blkheat serve: listening on <url>" on stdout once it serves (scripts and
 * tests wait for it); diagnostics go to stderr.
 */
import { createCollector } from '../collector/index.js';
import { startAgent } from '../service/agent.js';
import { UsageError } from '../service/flags.js';
import { helpText, parseServeArgs } from '../service/options.js';

export { summary } from '../service/options.js';

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

export async function run(argv: string[]): Promise<number> {
  let options;
  try {
    options = parseServeArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`blkheat serve: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (options === 'help') {
    console.log(helpText());
    return 0;
  }

  let agent;
  try {
    agent = await startAgent(options, { createCollector, log });
  } catch (e) {
    console.error(`blkheat serve: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const tokenHint = options.token ? ' (open the dashboard with #token=<token> after the URL)' : '';

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
    console.log(`blkheat serve: listening on ${agent.url}${tokenHint}`);
  });
}
