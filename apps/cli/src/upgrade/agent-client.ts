/**
 * The CLI's side of upgradeagent.API (docs/adr/0042-upgrade-agent.md): dials a node's agent over
 * aTLS, validating the node's attestation document with the cluster's attestation config, asks
 * for a nonce and sends the step signed with the admin kubeconfig's client key.
 */
import { sign, X509Certificate } from 'node:crypto';
import { Metadata, type ServiceError } from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import type { Validator } from '@asterism/attestation';
import { atlsChannelCredentials, ATLS_CLIENT_CHANNEL_OPTIONS } from '@asterism/atls';
import { AsterismError } from '@asterism/errors';
import { upgradeagent, upgradeSigningPayload, type components } from '@asterism/proto';

/** The agent could not be asked: unreachable, node not attested, or the call refused. */
export class AgentCallError extends AsterismError<'AGENT_UNREACHABLE' | 'AGENT_REFUSED'> {}

/** The admin identity a request is signed with. */
export interface AdminIdentity {
  certificatePem: Buffer;
  keyPem: Buffer;
}

/** The client certificate and key of the kubeconfig's current user (inline data or files). */
export function adminIdentityOf(kubeconfigPath: string): AdminIdentity {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const user = kc.getCurrentUser();
  const read = (data: string | undefined, file: string | undefined) => (data ? Buffer.from(data, 'base64') : file ? readFileSync(file) : undefined);
  const certificatePem = read(user?.certData, user?.certFile);
  const keyPem = read(user?.keyData, user?.keyFile);
  if (!certificatePem || !keyPem) throw new AgentCallError('AGENT_REFUSED', `the kubeconfig ${kubeconfigPath} has no client certificate and key (the upgrade agent accepts the cluster's admin certificate only)`);
  return { certificatePem, keyPem };
}

/** One step as the orchestrator asks it. */
export interface AgentStep {
  kubernetesVersion: string;
  components: components.Component[];
  step: upgradeagent.Step;
}

/** Calls nodes' agents. */
export interface UpgradeAgents {
  run(address: string, step: AgentStep, timeoutMs: number): Promise<upgradeagent.UpgradeResponse>;
}

/** upgradeagent.API over aTLS. */
export class AtlsUpgradeAgents implements UpgradeAgents {
  constructor(
    private readonly validator: Validator,
    private readonly admin: AdminIdentity,
    private readonly port: number,
  ) {}

  /** Runs the step; while the node is busy with a step an earlier (interrupted) run started, waits and asks again. */
  async run(address: string, step: AgentStep, timeoutMs: number): Promise<upgradeagent.UpgradeResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.once(address, step, deadline - Date.now());
      } catch (err) {
        const busy = err instanceof AgentCallError && err.details.grpcCode === 9;
        if (!busy || Date.now() + 5000 > deadline) throw err;
        await new Promise((r) => setTimeout(r, 5000));
      }
    }
  }

  private async once(address: string, step: AgentStep, timeoutMs: number): Promise<upgradeagent.UpgradeResponse> {
    const endpoint = `${address.includes(':') ? `[${address}]` : address}:${this.port}`;
    const client = new upgradeagent.APIClient(endpoint, atlsChannelCredentials({ validators: [this.validator] }), ATLS_CLIENT_CHANNEL_OPTIONS);
    try {
      const { nonce } = await unary<upgradeagent.ChallengeResponse>((cb) => client.challenge({}, new Metadata(), { deadline: Date.now() + 60_000 }, cb), endpoint);
      const req: upgradeagent.UpgradeRequest = { kubernetesVersion: step.kubernetesVersion, components: step.components, step: step.step, nonce, adminCertificate: this.admin.certificatePem, signature: Buffer.alloc(0) };
      const algorithm = new X509Certificate(this.admin.certificatePem).publicKey.asymmetricKeyType === 'ed25519' ? null : 'sha256';
      req.signature = sign(algorithm, upgradeSigningPayload(req), this.admin.keyPem);
      return await unary<upgradeagent.UpgradeResponse>((cb) => client.upgrade(req, new Metadata(), { deadline: Date.now() + timeoutMs }, cb), endpoint);
    } finally {
      client.close();
    }
  }
}

function unary<T>(call: (cb: (err: ServiceError | null, res: T) => void) => void, endpoint: string): Promise<T> {
  return new Promise((resolve, reject) =>
    call((err, res) => {
      if (!err) return resolve(res);
      const refused = [3, 7, 9, 16].includes(err.code);
      reject(new AgentCallError(refused ? 'AGENT_REFUSED' : 'AGENT_UNREACHABLE', `upgrade agent ${endpoint}: ${err.details || err.message}`, { details: { endpoint, grpcCode: err.code } }));
    }),
  );
}
