import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { QemuVtpmIssuer, QemuVtpmValidator, type Validator } from '@asterism/attestation';
import { kms } from '@asterism/proto';
import { missingComponent } from '@asterism/testing';
import { TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { atlsChannelCredentials, atlsServerCredentials, ATLS_MAX_EVIDENCE_BYTES } from './index.js';
import { getDataKey, startStubServer, type StubServer } from './services.fixture.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

// Client evidence with a firmware event log as large as the largest real one we measured
// (LARGEST_REAL_EVENT_LOG, see ATLS_MAX_EVIDENCE_BYTES in evidence.ts), and one filling EDK2's default 64 KiB log area,
// through the whole aTLS path: a real vTPM issuer on swtpm whose PCR 7 holds exactly the log's
// measurements, the client connector, chunked metadata, and the real vTPM validator on the server,
// which parses the log and replays it against the quoted PCRs.

/** Bytes of the largest real event log measured (Windows on a GCE Shielded VM; evidence.ts lists them all). */
const LARGEST_REAL_EVENT_LOG = 43_324;
const EV_NO_ACTION = 3;
const EV_EFI_VARIABLE_DRIVER_CONFIG = 0x80000001;
const EVENT2_OVERHEAD = 4 + 4 + 4 + 2 + 32 + 4; // pcr, type, digest count, alg, SHA-256 digest, size
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};

/** The crypto-agile header: a SHA-1-format EV_NO_ACTION event carrying "Spec ID Event03" with one bank, SHA-256. */
function specIdHeader(): Buffer {
  const spec = Buffer.concat([Buffer.from('Spec ID Event03\0', 'latin1'), u32(0), Buffer.from([0, 2, 0, 2]), u32(1), u16(TPM_ALG.SHA256), u16(32), Buffer.from([0])]);
  return Buffer.concat([u32(0), u32(EV_NO_ACTION), Buffer.alloc(20), u32(spec.length), spec]);
}

/**
 * An event log of exactly `size` bytes: Secure Boot variable events on PCR 7 of the size of a
 * db certificate (1.5 KiB of data each), the last one padded to the size; plus the digests to extend.
 */
function eventLogOf(size: number): { log: Buffer; digests: Buffer[] } {
  const parts = [specIdHeader()];
  const digests: Buffer[] = [];
  let used = parts[0]!.length;
  while (used < size) {
    const left = size - used - EVENT2_OVERHEAD;
    const dataLength = left - 1536 >= EVENT2_OVERHEAD ? 1536 : left;
    const data = randomBytes(dataLength);
    const digest = createHash('sha256').update(data).digest();
    digests.push(digest);
    parts.push(Buffer.concat([u32(7), u32(EV_EFI_VARIABLE_DRIVER_CONFIG), u32(1), u16(TPM_ALG.SHA256), digest, u32(data.length), data]));
    used += EVENT2_OVERHEAD + data.length;
  }
  return { log: Buffer.concat(parts), digests };
}

const tpms: Swtpm[] = [];
const servers: StubServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(tpms.map((t) => t.stop()));
});

describe('client evidence with a real-sized firmware event log (swtpm)', { skip }, () => {
  for (const [name, size] of [
    ['the largest real event log measured', LARGEST_REAL_EVENT_LOG],
    ["a full EDK2 default log area (64 KiB, OVMF's PcdTcgLogAreaMinLen)", 64 * 1024],
  ] as const) {
    it(`${name} (${size} bytes) plus the rest of a vTPM document passes the aTLS path and the event-log replay`, async () => {
      const tpm = await startSwtpm();
      tpms.push(tpm);
      const { log, digests } = eventLogOf(size);
      assert.equal(log.length, size);
      const client = await tpm.client();
      for (const digest of digests) await client.pcrExtend(7, [{ hashAlg: TPM_ALG.SHA256, digest }]);
      const seen: number[] = [];
      const inner = new QemuVtpmValidator(new Map());
      const recording: Validator = { variant: inner.variant, validate: (doc, nonce, signal) => (seen.push(doc.length), inner.validate(doc, nonce, signal)) };
      const server = await startStubServer(atlsServerCredentials({ clientValidators: [recording] }));
      servers.push(server);
      const issuer = new QemuVtpmIssuer(() => tpm.client(), async () => log);
      const grpcClient = new kms.APIClient(server.address, atlsChannelCredentials({ issuer }));
      try {
        const res = await getDataKey(grpcClient);
        assert.ok(res.ok, res.ok ? '' : res.details);
      } finally {
        grpcClient.close();
        await issuer.releaseAttestationKeys();
      }
      assert.equal(seen.length, 1, 'the server validated the evidence once');
      // base64 in the JSON document: 4/3 of the log, plus quotes, AK and user data.
      assert.ok(seen[0]! > (size * 4) / 3 && seen[0]! < ATLS_MAX_EVIDENCE_BYTES, `document of ${seen[0]} bytes`);
      console.log(`[evidence-size] event log ${size} B -> vTPM document ${seen[0]} B (limit ${ATLS_MAX_EVIDENCE_BYTES} B)`);
    });
  }
});
