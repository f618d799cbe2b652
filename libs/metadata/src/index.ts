/** Cloud metadata interface and providers: qemu-metadata-API client, static file, AWS, Azure, GCP. */
export { MetadataError, parseRole, toInstance, type InstanceMetadata, type MetadataErrorCode, type MetadataProvider, type Role } from './types.js';
export { QEMU_METADATA_BASE_URL, QemuMetadataClient } from './qemu-client.js';
export { StaticFileMetadata } from './static-file.js';
export { cloudMetadata, parseCloudKind, type CloudEndpoints, type CloudKind } from './cloud.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './http/metadata-http.js';
export { AWS_IMDS_BASE_URL, AwsImds, type AwsIdentityDocument } from './aws/aws-imds.js';
export { AwsMetadata, awsProviderId, type AwsCloudApi } from './aws/aws-provider.js';
export { AwsSdkCloudApi, type AwsSdkOptions } from './aws/aws-sdk-api.js';
export { awsMetadata, type AwsEndpoints } from './aws/aws-factory.js';
export { AZURE_IMDS_BASE_URL, AzureImds, type AzureInstance } from './azure/azure-imds.js';
export { AZURE_ARM_BASE_URL, AzureArmPeers, type AzurePeerSource } from './azure/azure-arm-peers.js';
export { AzureMetadata } from './azure/azure-provider.js';
export { azureMetadata, type AzureEndpoints } from './azure/azure-factory.js';
export { GCP_METADATA_BASE_URL, GcpMetadataServer, type GcpInstance } from './gcp/gcp-metadata-server.js';
export { GCP_COMPUTE_BASE_URL, GcpComputeRest, type GcpComputeApi } from './gcp/gcp-compute-api.js';
export { GcpMetadata } from './gcp/gcp-provider.js';
export { gcpMetadata, type GcpEndpoints } from './gcp/gcp-factory.js';
