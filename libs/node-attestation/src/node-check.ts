/**
 * One check of one running node: a fresh nonce, `verify.API/GetAttestation`, the variant's
 * validator, the `VerifyService` user data and the cluster mark (docs/protocol/continuous-attestation.md).
 */
import type { Validator } from '@asterism/attestation';
import { generateNonce } from '@asterism/crypto';
import { summarize } from './evidence.js';
import { checkClusterMark, findingOfError, VERIFY_USER_DATA, type Finding } from './judge.js';
import type { Verdict } from './verdict.js';

/** Fetches a node's attestation document for a nonce. */
export interface AttestationSource {
  getAttestation(endpoint: string, nonce: Uint8Array, signal: AbortSignal): Promise<Uint8Array>;
}

/** A node to check: its name and its verification service's `host:port`. */
export interface NodeTarget {
  name: string;
  endpoint: string;
}

/** What every check needs besides the node. */
export interface NodeCheckerOptions {
  source: AttestationSource;
  /** The cluster ID whose mark every node must carry; absent = no mark check (dummy, tests). */
  clusterId?: Uint8Array;
  timeoutMs: number;
  now?: () => Date;
}

/** Checks running nodes with a validator built for the running-node config (`runningNodeConfig`). */
export class NodeChecker {
  constructor(private readonly o: NodeCheckerOptions) {}

  /** Never throws: every outcome is a verdict. */
  async check(node: NodeTarget, validator: Validator): Promise<Verdict> {
    const started = process.hrtime.bigint();
    const at = (this.o.now ?? (() => new Date()))();
    const latencyMs = () => Number(process.hrtime.bigint() - started) / 1e6;
    const nonce = generateNonce();
    let document: Uint8Array;
    try {
      document = await this.o.source.getAttestation(node.endpoint, nonce, AbortSignal.timeout(this.o.timeoutMs));
    } catch (err) {
      return { node: node.name, status: 'Unreachable', reason: 'Unreachable', message: `no attestation from ${node.endpoint}: ${(err as Error).message}`, at, latencyMs: latencyMs() };
    }
    const evidence = summarize(validator.variant, document, at);
    const finding = await this.#judge(validator, document, nonce, evidence);
    const { ok, ...rest } = finding;
    return { node: node.name, status: ok ? 'Verified' : 'Refused', ...rest, at, latencyMs: latencyMs(), evidence };
  }

  /** Validator (signature, nonce, measurements), then the user data, then the cluster mark. */
  async #judge(validator: Validator, document: Uint8Array, nonce: Uint8Array, evidence: Verdict['evidence'] & object): Promise<Finding> {
    let userData: Uint8Array;
    try {
      userData = await validator.validate(document, nonce, AbortSignal.timeout(this.o.timeoutMs));
    } catch (err) {
      return findingOfError(err);
    }
    if (!Buffer.from(userData).equals(VERIFY_USER_DATA)) return { ok: false, reason: 'UserDataMismatch', field: 'userData', message: 'the document is not bound to the verification service (user data differs)' };
    const mark = checkClusterMark(evidence, this.o.clusterId);
    return mark.ok ? { ok: true, reason: 'Verified', message: 'attestation valid, measurements and cluster mark match' } : mark;
  }
}
