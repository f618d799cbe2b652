/**
 * How a container image travels in a component list (docs/protocol/components.md, "Image
 * components"): the component's URL names an OCI archive and its hash is the archive's SHA-256,
 * like any artifact; its install path lies below {@link INSTALL_PATHS.images} and reads
 * `<reference>@sha256:<manifest digest>`. A node imports such an archive into containerd instead of
 * writing a file, then checks that the reference resolves to that digest. The wire message keeps
 * its four fields (url, hash, install_path, extract = false).
 */
import { INSTALL_PATHS } from './install-paths.js';

/** An image a component names: its fully qualified reference and its manifest digest. */
export interface ImageTarget {
  /** e.g. `localhost/asterism/kube-proxy:v1.35.4`. */
  readonly ref: string;
  /** `sha256:<64 hex>` of the image manifest. */
  readonly digest: string;
}

const PREFIX = `${INSTALL_PATHS.images}/`;
/** A tagged reference: lower-case repository path segments, then a tag (no digest references). */
const REF = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** The install path of an image component. */
export function imageInstallPath(target: ImageTarget): string {
  return `${PREFIX}${target.ref}@${target.digest}`;
}

/** Whether `installPath` follows the image convention (below the images folder). */
export function isImageInstallPath(installPath: string): boolean {
  return installPath.startsWith(PREFIX);
}

/**
 * The image an install path names, or a reason it is malformed (a string): the reference must be
 * fully qualified with a tag and the digest `sha256:<64 lower-case hex>`.
 */
export function parseImageInstallPath(installPath: string): ImageTarget | string {
  if (!isImageInstallPath(installPath)) return `install path ${installPath} is not below ${INSTALL_PATHS.images}`;
  const rest = installPath.slice(PREFIX.length);
  const at = rest.lastIndexOf('@');
  if (at < 0) return `image install path ${installPath} must end in @sha256:<digest>`;
  const ref = rest.slice(0, at);
  const digest = rest.slice(at + 1);
  if (!DIGEST.test(digest)) return `image digest ${JSON.stringify(digest.slice(0, 80))} must be sha256:<64 lower-case hex digits>`;
  if (ref.length > 255 || !REF.test(ref)) return `image reference ${JSON.stringify(ref.slice(0, 120))} must be fully qualified with a tag (host/path:tag)`;
  return { ref, digest };
}
