/** Test helpers of @asterism/atls: a peer that fails connections in chosen ways. */
export { connectOnce, type Fault, type FaultAction, type FaultPhase, type FaultServer, startFaultServer } from './testing/fault-server.fixture.js';
