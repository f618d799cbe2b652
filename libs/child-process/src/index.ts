/** Supervised child processes: output to a log file, killed with this process, pids recorded for the test runner. */
export { ManagedProcess, type StartOptions } from './managed-process.js';
