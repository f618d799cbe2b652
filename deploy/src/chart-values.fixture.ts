/** Values sets shared by the chart tests (test data only; the secrets are random per run). */
import { randomBytes } from 'node:crypto';

export const JOIN_IMAGE = 'registry.example/asterism/joinservice';
export const KEY_IMAGE = 'registry.example/asterism/keyservice';
export const VERIFY_IMAGE = 'registry.example/asterism/verification-service';
export const MONITOR_IMAGE = 'registry.example/asterism/attestation-monitor';

export function joinserviceValues(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { image: { repository: JOIN_IMAGE }, attestationVariant: 'qemu-vtpm', ...extra };
}

export function keyserviceValues(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { image: { repository: KEY_IMAGE }, masterSecret: randomBytes(32).toString('base64'), salt: randomBytes(32).toString('base64'), ...extra };
}

/** Values of the verification-service chart (defaults: the TPM as a device). */
export function verificationValues(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { image: { repository: VERIFY_IMAGE }, attestationVariant: 'qemu-vtpm', ...extra };
}

/** Values of the attestation-monitor chart. */
export function monitorValues(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { image: { repository: MONITOR_IMAGE }, attestationVariant: 'qemu-vtpm', ...extra };
}

export function umbrellaValues(
  extra: { joinservice?: Record<string, unknown>; keyservice?: Record<string, unknown>; verificationservice?: Record<string, unknown>; attestationmonitor?: Record<string, unknown>; global?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return {
    ...(extra.global ? { global: extra.global } : {}),
    joinservice: joinserviceValues(extra.joinservice),
    keyservice: keyserviceValues(extra.keyservice),
    verificationservice: verificationValues(extra.verificationservice),
    attestationmonitor: monitorValues(extra.attestationmonitor),
  };
}
