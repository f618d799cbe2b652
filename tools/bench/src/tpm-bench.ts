/**
 * TPM benchmark on a real swtpm: median latency of TPM2_Quote (SHA-256 PCRs 0-23, RSA and ECC
 * AKs) and of quote + verifyQuote (PCR read included, as a validator-side check would need).
 * Run: npx tsx tools/bench/src/tpm-bench.ts [iterations]
 */
import { randomBytes } from 'node:crypto';
import { range, TPM_ALG, verifyQuote } from '@asterism/tpm';
import { startSwtpm } from '@asterism/tpm/testing';
import { median } from './stats.js';

const N = Number(process.argv[2] ?? 200);


async function main(): Promise<void> {
  const tpm = await startSwtpm();
  try {
    const c = await tpm.client();
    const sel = [{ hashAlg: TPM_ALG.SHA256, pcrs: range(24) }];
    const rows: Array<Record<string, string | number>> = [];
    for (const kind of ['ecc', 'rsa'] as const) {
      const t0 = performance.now();
      const ak = await c.createAttestationKey(kind, 'owner');
      const createMs = performance.now() - t0;
      const pcrs = await c.pcrRead(range(24));
      const quote: number[] = [];
      const both: number[] = [];
      const verify: number[] = [];
      for (let i = 0; i < N; i++) {
        const nonce = randomBytes(32);
        const a = performance.now();
        const q = await c.quote(ak.handle, nonce, sel);
        const b = performance.now();
        verifyQuote({ akPublic: ak.publicBytes, attest: q.attestBytes, signature: q.signatureBytes, nonce, pcrs });
        const d = performance.now();
        quote.push(b - a);
        verify.push(d - b);
        both.push(d - a);
      }
      await c.flushContext(ak.handle);
      rows.push({
        ak: kind,
        n: N,
        createPrimaryMs: +createMs.toFixed(2),
        quoteMedianMs: +median(quote).toFixed(3),
        verifyMedianMs: +median(verify).toFixed(3),
        quotePlusVerifyMedianMs: +median(both).toFixed(3),
      });
    }
    const pr: number[] = [];
    for (let i = 0; i < 50; i++) {
      const a = performance.now();
      await c.pcrRead(range(24));
      pr.push(performance.now() - a);
    }
    console.table(rows);
    console.log(JSON.stringify({ bench: 'tpm', swtpm: 'unix socket', rows, pcrRead24MedianMs: +median(pr).toFixed(3) }));
  } finally {
    await tpm.stop();
  }
}

await main();
