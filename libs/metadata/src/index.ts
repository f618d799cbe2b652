/** Cloud metadata interface and providers (qemu-metadata-API client, static file for the local cluster). */
export { MetadataError, parseRole, toInstance, type InstanceMetadata, type MetadataErrorCode, type MetadataProvider, type Role } from './types.js';
export { QEMU_METADATA_BASE_URL, QemuMetadataClient } from './qemu-client.js';
export { StaticFileMetadata } from './static-file.js';
