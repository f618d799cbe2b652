/**
 * A TD for CLI tests: the qemu-tdx issuer over configfs-tsm (docs/protocol/tdx-dcap.md) where the
 * configfs folder is a temp directory and writing `inblob` answers `outblob` with the real Intel
 * quote vector carrying that report data and a chosen RTMR2, re-signed by the stand-in PKI of
 * @asterism/attestation/testing (the real signature cannot cover new report data).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigfsTsmQuoteProvider, parseTdxQuote, QemuTdxIssuer } from '@asterism/attestation';
import { FakeConfigfsTsm, resignedQuote, tdxVector, VECTOR_OFFSETS, type SyntheticPki } from '@asterism/attestation/testing';

/** Byte offset of RTMR2 in the signed header + TD report body (48-byte header, RTMR2 at body offset 424). */
const RTMR2_OFFSET = 48 + 424;

/** The TD: its issuer, its registers' quote body, and cleanup of the configfs stand-in. */
export interface SyntheticTd {
  readonly issuer: QemuTdxIssuer;
  /** Removes the temp configfs folder. */
  remove(): void;
}

/** A TD whose quotes chain to `pki` and whose RTMR2 is `rtmr2` (48 bytes). */
export function syntheticTd(pki: SyntheticPki, rtmr2: Buffer): SyntheticTd {
  const root = mkdtempSync(join(tmpdir(), 'asterism-cli-tsm-'));
  const real = parseTdxQuote(tdxVector('quote-v4-spr.dat')).signedBytes;
  const tsm = new FakeConfigfsTsm(
    root,
    (reportData) => {
      const signed = Buffer.from(real);
      reportData.copy(signed, VECTOR_OFFSETS.reportData);
      rtmr2.copy(signed, RTMR2_OFFSET);
      return { report: resignedQuote(pki, signed), certTable: Buffer.alloc(0) };
    },
    'tdx_guest',
  );
  return { issuer: new QemuTdxIssuer(new ConfigfsTsmQuoteProvider(root, tsm)), remove: () => rmSync(root, { recursive: true, force: true }) };
}
