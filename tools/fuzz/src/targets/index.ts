/** Every target of the gate, in a fixed order (the order is part of what makes a run repeatable). */
import type { FuzzTarget } from '../gate.js';
import { configTargets } from './config.js';
import { requestTargets } from './requests.js';
import { snpTargets } from './snp.js';
import { tdxTargets } from './tdx.js';
import { vtpmTargets } from './vtpm.js';

/** Builds all targets (reads testdata/, makes the aTLS certificate and the openssl CSRs). */
export async function allTargets(): Promise<FuzzTarget[]> {
  return [...snpTargets(), ...tdxTargets(), ...vtpmTargets(), ...configTargets(), ...requestTargets()];
}
