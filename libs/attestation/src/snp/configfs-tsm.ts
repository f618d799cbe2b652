/**
 * Extended SNP reports through configfs-tsm (docs/protocol/sev-snp.md §8): the `sev_guest`
 * provider of the shared client (../tsm/configfs-tsm.ts); outblob is the report, auxblob the
 * certificate table.
 */
import { join } from 'node:path';
import { ConfigfsTsm, NODE_TSM_FS, CONFIGFS_TSM_REPORT_DIR, type ConfigfsTsmOptions, type TsmFileSystem } from '../tsm/configfs-tsm.js';
import { AttestationError } from '../errors.js';
import { REPORT_SIZE } from './report.js';

/** One extended report. */
export interface ExtendedReport {
  /** The 0x4A0-byte report. */
  readonly report: Buffer;
  /** The certificate table (may be empty when the host attaches none). */
  readonly certTable: Buffer;
}

/** Produces extended SNP reports for 64 bytes of REPORT_DATA. */
export interface SnpReportSource {
  extendedReport(reportData: Uint8Array, vmpl: number, signal?: AbortSignal): Promise<ExtendedReport>;
}

/** configfs-tsm client for SEV-SNP guests. */
export class ConfigfsTsmReportSource implements SnpReportSource {
  readonly #tsm: ConfigfsTsm;

  constructor(root: string = CONFIGFS_TSM_REPORT_DIR, fs: TsmFileSystem = NODE_TSM_FS, options: Pick<ConfigfsTsmOptions, 'devicePath'> = {}) {
    this.#tsm = new ConfigfsTsm('sev_guest', { root, fs, ...options });
  }

  async extendedReport(reportData: Uint8Array, vmpl: number, signal?: AbortSignal): Promise<ExtendedReport> {
    const { outblob, auxblob } = await this.#tsm.report(reportData, vmpl, signal);
    if (outblob.length < REPORT_SIZE) {
      throw new AttestationError('ISSUER_FAILED', `outblob has ${outblob.length} bytes, an SNP report has ${REPORT_SIZE}`, { details: { step: 'configfs-tsm report', provider: 'sev_guest', tsm: 'short', size: outblob.length } });
    }
    return { report: Buffer.from(outblob.subarray(0, REPORT_SIZE)), certTable: auxblob };
  }
}

/** The extended-report source of a node whose paths are under `stateRoot` (configfs-tsm, and `/dev/sev-guest` named in errors). */
export function nodeSnpReportSource(stateRoot: string, fs: TsmFileSystem = NODE_TSM_FS): ConfigfsTsmReportSource {
  return new ConfigfsTsmReportSource(join(stateRoot, CONFIGFS_TSM_REPORT_DIR), fs, { devicePath: join(stateRoot, 'dev/sev-guest') });
}
