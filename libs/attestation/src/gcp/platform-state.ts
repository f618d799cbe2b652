/**
 * The GCE platform state in PCR 0 of the event log (docs/protocol/cloud-vtpm-variants.md §4.3):
 * the firmware version from the `EV_S_CRTM_VERSION` event (UCS-2 "GCE Virtual Firmware v<N>")
 * and the confidential-computing technology from the `EV_NONHOST_INFO` event
 * ("GCE NonHostInfo\0" followed by one technology byte). Only events of a log that replayed to
 * the verified quote are read, so these values are measured, not claimed.
 */
import { createHash } from 'node:crypto';
import { TPM_ALG } from '@asterism/tpm';
import { AttestationError } from '../errors.js';
import { parseEventLog, type TcgEvent } from '../vtpm/event-log.js';

export const EV_S_CRTM_VERSION = 0x00000008;
export const EV_NONHOST_INFO = 0x00000011;

/** GCE confidential technologies (go-tpm-tools enum values). */
export const GCE_TECHNOLOGY = { NONE: 0, AMD_SEV: 1, AMD_SEV_ES: 2, INTEL_TDX: 3, AMD_SEV_SNP: 4 } as const;

const FIRMWARE_PREFIX = 'GCE Virtual Firmware v';
const NONHOST_SIGNATURE = Buffer.from('GCE NonHostInfo\0', 'latin1');

/** What PCR 0 says about the platform; 0 / NONE when the event is absent or not GCE's. */
export interface GcePlatformState {
  readonly gceVersion: number;
  readonly technology: number;
}

/** The GCE firmware version of a UCS-2 (UTF-16LE, NUL-terminated) S-CRTM version string, or 0. */
export function gceFirmwareVersion(data: Buffer): number {
  const text = data.toString('utf16le').replace(/\0+$/, '');
  if (!text.startsWith(FIRMWARE_PREFIX)) return 0;
  const digits = text.slice(FIRMWARE_PREFIX.length);
  return /^\d{1,9}$/.test(digits) ? Number(digits) : 0;
}

/**
 * The replay only proves the event DIGESTS; the data read here must be what was measured:
 * its SHA-256 must be the event's SHA-256 digest.
 */
function requireMeasuredData(event: TcgEvent): void {
  const digest = event.digests.get(TPM_ALG.SHA256);
  if (!digest || !digest.equals(createHash('sha256').update(event.data).digest())) {
    throw new AttestationError('PLATFORM_CHECK_FAILED', `PCR 0 event ${event.sequence} (type 0x${event.type.toString(16)}): its data is not what its SHA-256 digest measured`, {
      details: { check: 'event-digest', sequence: event.sequence, type: event.type },
    });
  }
}

/** Reads the platform state from the PCR 0 events of `rawLog` (events whose data matches their digest). */
export function gcePlatformState(rawLog: Uint8Array): GcePlatformState {
  let gceVersion = 0;
  let technology: number = GCE_TECHNOLOGY.NONE;
  for (const event of parseEventLog(rawLog).events) {
    if (event.pcr !== 0 || (event.type !== EV_S_CRTM_VERSION && event.type !== EV_NONHOST_INFO)) continue;
    requireMeasuredData(event);
    if (event.type === EV_S_CRTM_VERSION) gceVersion = gceFirmwareVersion(event.data);
    if (event.type === EV_NONHOST_INFO && event.data.length > NONHOST_SIGNATURE.length && event.data.subarray(0, NONHOST_SIGNATURE.length).equals(NONHOST_SIGNATURE)) {
      technology = event.data[NONHOST_SIGNATURE.length]!;
    }
  }
  return { gceVersion, technology };
}

/**
 * The gcp-sev-es CVM check: firmware version at least 1 and technology AMD_SEV (the value the
 * reference requires). PLATFORM_CHECK_FAILED naming the failed check.
 */
export function checkGceSevPlatform(rawLog: Uint8Array): GcePlatformState {
  if (rawLog.length === 0) {
    throw new AttestationError('PLATFORM_CHECK_FAILED', 'gcp-sev-es document has no event log: the GCE platform state cannot be established', { details: { check: 'event-log' } });
  }
  const state = gcePlatformState(rawLog);
  if (state.gceVersion < 1) {
    throw new AttestationError('PLATFORM_CHECK_FAILED', `GCE firmware version ${state.gceVersion} is below 1 (no GCE S-CRTM version event in PCR 0)`, { details: { check: 'gce-version', actual: state.gceVersion, minimum: 1 } });
  }
  if (state.technology !== GCE_TECHNOLOGY.AMD_SEV) {
    const name = Object.entries(GCE_TECHNOLOGY).find(([, v]) => v === state.technology)?.[0] ?? `unknown (${state.technology})`;
    throw new AttestationError('PLATFORM_CHECK_FAILED', `GCE confidential technology is ${name}, want AMD_SEV`, { details: { check: 'technology', actual: state.technology, expected: GCE_TECHNOLOGY.AMD_SEV } });
  }
  return state;
}
