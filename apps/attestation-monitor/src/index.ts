/** What tools (benchmarks) drive in-process: one monitor round over injected ports. */
export { JoinConfigInputs } from './inputs.js';
export { MonitorMetrics } from './metrics.js';
export { AttestationMonitor, type MonitorDeps, type NodeOutcome } from './monitor.js';
export { endpointOf, runningNodeValidator } from './targets.js';
