#!/usr/bin/env node
/**
 * Reads a booted node's PCRs the way a client sees them: an aTLS handshake with the node's
 * InitServer (init.API, :9000) makes the node's bootstrapper quote its vTPM through libs/tpm; the
 * quote is validated against the attestation config given (or refused) and its SHA-256 PCR values
 * are printed as JSON `{"accepted": bool, "error"?: string, "pcrs": {"<index>": "<hex>"}}`.
 * Runs inside the VM's network namespace. Usage: read-pcrs.ts <host:port> <attestation-config.json>
 */
import { readFileSync } from 'node:fs';
import { atlsChannelCredentials } from '@asterism/atls';
import { decodeDocument, findSha256QuoteIndex, validatorFromConfigJson, type Validator, type Variant } from '@asterism/attestation';
import { init } from '@asterism/proto';

/** Keeps the document's PCRs and the inner validator's verdict. */
class PcrRecorder implements Validator {
  pcrs: Map<number, Buffer> | undefined;
  outcome: { ok: true } | { ok: false; error: string } | undefined;

  constructor(private readonly inner: Validator) {}

  get variant(): Variant {
    return this.inner.variant;
  }

  async validate(document: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    const doc = decodeDocument(document);
    this.pcrs = doc.attestation?.quotes[findSha256QuoteIndex(doc.attestation)]?.pcrs?.pcrs;
    try {
      const out = await this.inner.validate(document, nonce, signal);
      this.outcome = { ok: true };
      return out;
    } catch (err) {
      this.outcome = { ok: false, error: (err as Error).message };
      throw err;
    }
  }
}

async function main(target: string, configPath: string): Promise<void> {
  const recorder = new PcrRecorder(validatorFromConfigJson(readFileSync(configPath), 'qemu-vtpm'));
  const client = new init.APIClient(target, atlsChannelCredentials({ validators: [recorder] }));
  const deadline = Date.now() + 300_000;
  try {
    while (!recorder.outcome && Date.now() < deadline) {
      await new Promise<void>((resolve) => client.waitForReady(Math.min(deadline, Date.now() + 2000), () => resolve()));
    }
  } finally {
    client.close();
  }
  if (!recorder.outcome) throw new Error(`no attested connection to ${target} within 300 s`);
  const pcrs = Object.fromEntries([...(recorder.pcrs ?? new Map<number, Buffer>())].map(([i, v]) => [String(i), v.toString('hex')]));
  process.stdout.write(`${JSON.stringify({ accepted: recorder.outcome.ok, ...(recorder.outcome.ok ? {} : { error: recorder.outcome.error }), pcrs })}\n`);
}

const [target, config] = process.argv.slice(2);
if (!target || !config) {
  process.stderr.write('usage: read-pcrs.ts <host:port> <attestation-config.json>\n');
  process.exit(2);
}
main(target, config).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`read-pcrs: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
