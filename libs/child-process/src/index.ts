/** Child processes: supervised long-running ones (output to a log file, killed with this process, pids recorded for the test runner) and programs run to completion. */
export { ManagedProcess, type StartOptions } from './managed-process.js';
export { CommandStartError, runCommand, type CommandResult, type RunCommandOptions } from './run-command.js';
