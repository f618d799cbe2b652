/**
 * A TD for CLI tests: the qemu-tdx issuer over configfs-tsm (docs/protocol/tdx-dcap.md) where the
 * configfs folder is a temp directory and writing `inblob` answers `outblob` with the real Intel
 * quote vector carrying that report data and a chosen RTMR2, re-signed by the stand-in PKI of
 * @asterism/attestation/testing (the real signature cannot cover new report data).
 */
import * as fsp from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ConfigfsTsmQuoteProvider, parseTdxQuote, QemuTdxIssuer, type TsmFs } from '@asterism/attestation';
import { resignedQuote, tdxVector, VECTOR_OFFSETS, type SyntheticPki } from '@asterism/attestation/testing';

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
  const fs: TsmFs = {
    mkdir: async (p) => {
      await fsp.mkdir(p);
      await fsp.writeFile(join(p, 'generation'), '0\n');
    },
    writeFile: async (p, data) => {
      await fsp.writeFile(p, data);
      if (basename(p) !== 'inblob') return;
      const signed = Buffer.from(real);
      data.copy(signed, VECTOR_OFFSETS.reportData);
      rtmr2.copy(signed, RTMR2_OFFSET);
      await fsp.writeFile(join(dirname(p), 'outblob'), resignedQuote(pki, signed));
      await fsp.writeFile(join(dirname(p), 'generation'), '1\n');
    },
    readFile: (p) => fsp.readFile(p),
    rmdir: (p) => fsp.rm(p, { recursive: true }),
  };
  return { issuer: new QemuTdxIssuer(new ConfigfsTsmQuoteProvider(root, fs)), remove: () => rmSync(root, { recursive: true, force: true }) };
}
