/**
 * The EC2 image lookup the aws-nitro-tpm validator needs (docs/protocol/cloud-vtpm-variants.md §3),
 * declared here so the process wiring can provide it without importing the variant.
 */

/**
 * Answers EC2 DescribeImages(ImageIds=[imageId]) in `region`: the first image's `TpmSupport`
 * (undefined when unset). Implementations: an @aws-sdk/client-ec2 adapter, a local fake.
 */
export interface ImageTpmSupportLookup {
  tpmSupport(region: string, imageId: string, signal?: AbortSignal): Promise<string | undefined>;
}
