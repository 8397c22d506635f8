import { Command } from 'commander';
import { adminCommands } from './commands/admin.js';
import { peopleCommands } from './commands/people.js';
import { alertCommands } from './commands/alerts.js';
import { receiptCommands } from './commands/receipts.js';
import { accountCommands } from './commands/accounts.js';
import { copyingCommands } from './commands/copying.js';
import { doctorCommand } from './commands/doctor.js';
import { eventCommands } from './commands/events.js';
import { groupCommands } from './commands/groups.js';
import { historyCommands } from './commands/history.js';
import { orderCommands } from './commands/orders.js';
import { panicCloseCommand } from './commands/panic-close.js';
import { serveCommand } from './commands/serve.js';
import { apiCommand, workerCommand } from './commands/scale-out.js';
import { simulatorCommand } from './commands/simulator.js';
import { tradeCommands } from './commands/trades.js';
import { reportFailure } from './errors.js';

/**
 * The `copytrade` command. Each file under commands/ adds its commands: the service (serve, simulator), the
 * operator's (migrate, users, tokens, keys: on the store or through a running server), and the trader's,
 * which call family V with an API key through the typed client (`copytrade/client`).
 */
export function buildCli(): Command {
  const program = new Command('copytrade').description('Self-hostable copy-trading service').exitOverride();
  for (const add of [
    serveCommand,
    apiCommand,
    workerCommand,
    simulatorCommand,
    doctorCommand,
    adminCommands,
    peopleCommands,
    receiptCommands,
    accountCommands,
    orderCommands,
    panicCloseCommand,
    copyingCommands,
    tradeCommands,
    eventCommands,
    groupCommands,
    historyCommands,
    alertCommands,
  ])
    add(program);
  return program;
}

export async function run(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    process.exit(reportFailure(err, argv.includes('--json')));
  }
}
