/**
 * blkheat command line: dispatches to a subcommand. Each subcommand module exports `summary`
 * and `run(argv)`, which returns the exit code and prints its own --help.
 */
import { AGENT_VERSION } from '../version.js';

interface Subcommand {
  summary: string;
  run(argv: string[]): Promise<number>;
}

const subcommands: Record<string, () => Promise<Subcommand>> = {
  fleet: () => import('./fleet.js'),
  record: () => import('./record.js'),
  serve: () => import('./serve.js'),
};

function usage(): string {
  return [
    `blkheat ${AGENT_VERSION}: live block I/O latency heat maps for Linux (eBPF)`,
    '',
    'Usage: blkheat <command> [options]',
    '',
    'Commands:',
    '  fleet    one dashboard for many agents, drawn from Prometheus native histograms (no BPF, no root)',
    '  record   print per-interval latency histograms per disk and op class (like biolatency -D -F, finer)',
    '  serve    run the agent: live dashboard, WebSocket stream, history, REST API, Prometheus /metrics',
    '',
    "Run 'blkheat <command> --help' for a command's options.",
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    console.log(AGENT_VERSION);
    return 0;
  }
  const load = subcommands[name];
  if (!load) {
    console.error(`blkheat: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  const sub = await load();
  return sub.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`blkheat: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
