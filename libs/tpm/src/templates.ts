import { TPM_ALG, TPM_ECC_NIST_P256 } from './constants.js';
import { TPMA_OBJECT, type TpmtPublic } from './structures/public.js';

/**
 * go-tpm-tools' "FlagSignerDefault": fixedTPM | fixedParent | sensitiveDataOrigin | userWithAuth |
 * restricted | sign = 0x00050072 (no noDA).
 */
export const AK_ATTRIBUTES =
  TPMA_OBJECT.fixedTPM | TPMA_OBJECT.fixedParent | TPMA_OBJECT.sensitiveDataOrigin | TPMA_OBJECT.userWithAuth | TPMA_OBJECT.restricted | TPMA_OBJECT.sign;

/**
 * The RSA attestation-key template, byte-identical to go-tpm-tools' AKTemplateRSA: RSA-2048,
 * nameAlg SHA-256, symmetric NULL, RSASSA-SHA256, exponent 0 (65537), empty unique.
 */
export function akTemplateRsa(): TpmtPublic {
  return {
    type: TPM_ALG.RSA,
    nameAlg: TPM_ALG.SHA256,
    objectAttributes: AK_ATTRIBUTES,
    authPolicy: Buffer.alloc(0),
    rsa: { symmetric: { algorithm: TPM_ALG.NULL }, scheme: { scheme: TPM_ALG.RSASSA, hashAlg: TPM_ALG.SHA256 }, keyBits: 2048, exponent: 0 },
    modulus: Buffer.alloc(0),
  };
}

/**
 * The ECC attestation-key template, byte-identical to go-tpm-tools' AKTemplateECC: NIST P-256,
 * nameAlg SHA-256, symmetric NULL, ECDSA-SHA256, KDF NULL, unique = two 32-byte zero coordinates
 * (go-tpm-tools keeps the EK template's zero point, which changes the derived key).
 */
export function akTemplateEcc(): TpmtPublic {
  return {
    type: TPM_ALG.ECC,
    nameAlg: TPM_ALG.SHA256,
    objectAttributes: AK_ATTRIBUTES,
    authPolicy: Buffer.alloc(0),
    ecc: { symmetric: { algorithm: TPM_ALG.NULL }, scheme: { scheme: TPM_ALG.ECDSA, hashAlg: TPM_ALG.SHA256 }, curveId: TPM_ECC_NIST_P256, kdf: { scheme: TPM_ALG.NULL } },
    x: Buffer.alloc(32),
    y: Buffer.alloc(32),
  };
}
