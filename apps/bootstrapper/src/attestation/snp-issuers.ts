import { AwsSevSnpIssuer, AzureSevSnpIssuer, GcpSevSnpIssuer, type Issuer, type TpmOpener } from '@asterism/attestation';

/**
 * The issuer of an AMD SEV-SNP variant on this node, or undefined for other variants:
 * azure-sev-snp (HCL report in TPM NV, AK persisted by the HCL, VCEK from THIM on the instance
 * metadata service), aws-sev-snp and gcp-sev-snp (extended SNP report through configfs-tsm; GCE
 * instance identity from the metadata server). Each reports a clear ISSUER_FAILED on a node
 * without the interface it needs (no configfs-tsm, no HCL report) when it first attests.
 */
export function snpIssuerFor(variant: string, openTpm: TpmOpener): Issuer | undefined {
  switch (variant) {
    case 'azure-sev-snp':
      return new AzureSevSnpIssuer(openTpm);
    case 'aws-sev-snp':
      return new AwsSevSnpIssuer(openTpm);
    case 'gcp-sev-snp':
      return new GcpSevSnpIssuer(openTpm);
    default:
      return undefined;
  }
}
