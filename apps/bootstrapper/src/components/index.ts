/** Installing the Kubernetes components a node is told to run (docs/protocol/components.md). */
export { ComponentInstaller, type ComponentInstallerOptions, type InstallReport } from './component-installer.js';
export { ComponentInstallError, parseComponents, type ComponentSpec } from './component-spec.js';
export type { FetchLimits } from './artifact-fetcher.js';
export { CtrImageStore, type CtrImageStoreOptions, type ImageStore } from './image-store.js';
