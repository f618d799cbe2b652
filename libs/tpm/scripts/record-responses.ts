/**
 * Regenerates src/testdata/responses.json: real TPM responses from swtpm, one per command and
 * shape, used as seeds by the parser fuzz tests. Run: npx tsx libs/tpm/scripts/record-responses.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TpmClient, TPM_ALG, type TpmTransport } from '../src/index.js';
import { startSwtpm } from '../src/testing/swtpm.fixture.js';

/** Wraps a transport and keeps (command code, response) pairs. */
class RecordingTransport implements TpmTransport {
  readonly records: Array<{ command: string; response: string }> = [];
  constructor(private readonly inner: TpmTransport) {}
  async transmit(command: Uint8Array): Promise<Buffer> {
    const resp = await this.inner.transmit(command);
    this.records.push({ command: Buffer.from(command).toString('hex'), response: resp.toString('hex') });
    return resp;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function main(): Promise<void> {
  const tpm = await startSwtpm({ ekCert: true });
  try {
    const base = await tpm.client();
    const rec = new RecordingTransport(base.transport);
    const c = new TpmClient(rec);
    const byName: Record<string, string[]> = {};
    const keep = (name: string) => {
      byName[name] = [...(byName[name] ?? []), ...rec.records.splice(0).map((r) => r.response)];
    };
    await c.startup();
    keep('Startup');
    await c.pcrBanks();
    await c.getProperty(0x12c);
    await c.listHandles(0x01000000);
    keep('GetCapability');
    await c.pcrRead(undefined, TPM_ALG.SHA256);
    await c.pcrRead([0, 1, 15], TPM_ALG.SHA384);
    keep('PCR_Read');
    await c.pcrExtend(16, [{ hashAlg: TPM_ALG.SHA256, digest: Buffer.alloc(32, 1) }]);
    keep('PCR_Extend');
    await c.pcrEvent(16, Buffer.from('event'));
    keep('PCR_Event');
    const rsa = await c.createAttestationKey('rsa', 'owner');
    const ecc = await c.createAttestationKey('ecc', 'endorsement');
    keep('CreatePrimary');
    await c.readPublic(rsa.handle);
    await c.readPublic(ecc.handle);
    keep('ReadPublic');
    await c.quote(rsa.handle, Buffer.alloc(32, 7), [{ hashAlg: TPM_ALG.SHA256, pcrs: [0, 1, 2, 15, 23] }]);
    await c.quote(ecc.handle, Buffer.alloc(32, 8), [{ hashAlg: TPM_ALG.SHA256, pcrs: Array.from({ length: 24 }, (_, i) => i) }]);
    keep('Quote');
    await c.flushContext(rsa.handle);
    await c.flushContext(ecc.handle);
    keep('FlushContext');
    await c.nvReadPublic(0x01c00002).catch(() => undefined);
    await c.nvReadPublic(0x01c00016).catch(() => undefined);
    keep('NV_ReadPublic');
    await c.readEkCertificate('RSA_2048');
    await c.readEkCertificate('ECC_P384');
    const all = rec.records.splice(0).map((r) => r.response);
    byName.NV_Mixed = all;
    writeFileSync(join(import.meta.dirname, '..', 'src', 'testdata', 'responses.json'), JSON.stringify(byName, null, 1) + '\n');
    console.log(Object.fromEntries(Object.entries(byName).map(([k, v]) => [k, v.length])));
  } finally {
    await tpm.stop();
  }
}

await main();
