/** The Kubernetes versions Asterism supports and what a node of each installs (docs/protocol/components.md). */
export {
  defaultKubernetesVersion,
  supportedKubernetesVersions,
  versionRow,
  wireComponents,
  VersionsError,
  type ComponentArtifact,
  type ImageArtifact,
  type VersionRow,
  type WireComponent,
} from './manifest.js';
export { INSTALL_PATHS } from './install-paths.js';
export {
  checkUpgradePath,
  compareKubeVersions,
  parseKubeVersion,
  upgradeTargets,
  UpgradePathError,
  type KubeVersion,
  type UpgradeRefusal,
} from './upgrade-path.js';
export { imageInstallPath, isImageInstallPath, parseImageInstallPath, type ImageTarget } from './image-path.js';
export { parseImageOverlay, renderImageOverlay, type ImageOverlay } from './image-overlay.js';
export { CONTROL_PLANE_ONLY_FILES, CONTROL_PLANE_ONLY_IMAGES, componentsForRole, isControlPlaneOnlyImage } from './node-roles.js';
