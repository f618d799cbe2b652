/**
 * The components of an init request or a join ticket, validated once at the edge
 * (docs/protocol/components.md): a supported URL, a `sha256:<hex>` hash (optional only for
 * `data:` URLs, as in the reference), an absolute install path without `..`, and a name for logs
 * and errors taken from the URL's last path segment. An install path below /run/state/images names
 * a container image (`<reference>@<digest>`, libs/versions) that is imported, not written.
 */
import { posix } from 'node:path';
import { AsterismError } from '@asterism/errors';
import { isImageInstallPath, parseImageInstallPath, type ImageTarget } from '@asterism/versions';

/** Why components could not be installed; `details` names the component and, for a mismatch, both hashes. */
export class ComponentInstallError extends AsterismError<
  'COMPONENT_INVALID' | 'ARTIFACT_UNREACHABLE' | 'ARTIFACT_TOO_LARGE' | 'HASH_MISMATCH' | 'EXTRACT_FAILED' | 'INSTALL_FAILED' | 'IMAGE_DIGEST_MISMATCH' | 'IMAGE_IMPORT_FAILED'
> {}

/** A component ready to install. */
export interface ComponentSpec {
  /** `kubelet`, `cni-plugins` (the URL's file name without `.tar.gz`/`.tgz`). */
  readonly name: string;
  readonly url: URL;
  /** Lower-case hex SHA-256 the artifact must have, or undefined for an unhashed `data:` URL. */
  readonly sha256: string | undefined;
  readonly installPath: string;
  readonly extract: boolean;
  /** Set for an image component: the archive is imported into containerd and must resolve to this. */
  readonly image?: ImageTarget;
}

/** The wire shape (`components.Component`). */
export interface WireComponentLike {
  url: string;
  hash: string;
  installPath: string;
  extract: boolean;
}

const PROTOCOLS = new Set(['http:', 'https:', 'file:', 'data:']);

/** Validates every component (all or nothing); the first problem is a COMPONENT_INVALID error. */
export function parseComponents(list: readonly WireComponentLike[]): ComponentSpec[] {
  const specs = list.map((c, i) => parseComponent(c, i));
  const seen = new Set<string>();
  for (const s of specs) {
    const key = s.image ? `image ${s.image.ref}` : `${s.installPath} ${s.extract}`;
    if (!s.extract && seen.has(key)) throw invalid(s.name, s.image ? `image ${s.image.ref} is named twice` : `install path ${s.installPath} is named twice`);
    seen.add(key);
  }
  return specs;
}

function parseComponent(c: WireComponentLike, index: number): ComponentSpec {
  let url: URL;
  try {
    url = new URL(c.url);
  } catch {
    throw invalid(`components[${index}]`, `URL ${JSON.stringify(c.url.slice(0, 200))} is not a URL`);
  }
  const name = componentName(url, index);
  if (!PROTOCOLS.has(url.protocol)) throw invalid(name, `URL scheme ${url.protocol} is not supported (http, https, file, data)`);
  const sha256 = parseHash(c.hash, name, url.protocol === 'data:');
  const installPath = c.installPath;
  if (!installPath.startsWith('/') || posix.normalize(installPath) !== installPath || installPath.split('/').includes('..') || installPath === '/') {
    throw invalid(name, `install path ${JSON.stringify(installPath)} must be an absolute, normalised path below /`);
  }
  if (isImageInstallPath(installPath)) {
    const image = parseImageInstallPath(installPath);
    if (typeof image === 'string') throw invalid(name, image);
    if (c.extract) throw invalid(name, 'an image archive is imported, not extracted (extract must be false)');
    if (sha256 === undefined) throw invalid(name, 'an image archive needs a sha256 hash');
    return { name, url, sha256, installPath, extract: false, image };
  }
  return { name, url, sha256, installPath: installPath.replace(/\/$/, ''), extract: c.extract };
}

function parseHash(hash: string, name: string, optional: boolean): string | undefined {
  if (hash === '' && optional) return undefined;
  const m = /^sha256:([0-9a-fA-F]{64})$/.exec(hash);
  if (!m) throw invalid(name, `hash ${JSON.stringify(hash.slice(0, 80))} must be sha256:<64 hex digits>`);
  return m[1]!.toLowerCase();
}

function componentName(url: URL, index: number): string {
  if (url.protocol === 'data:') return `data-component-${index}`;
  const last = url.pathname.split('/').filter(Boolean).pop() ?? '';
  const name = decodeURIComponent(last).replace(/\.(tar\.gz|tgz|tar)$/, '');
  return /^[A-Za-z0-9._-]{1,100}$/.test(name) ? name : `component-${index}`;
}

function invalid(name: string, why: string): ComponentInstallError {
  return new ComponentInstallError('COMPONENT_INVALID', `component ${name}: ${why}`, { details: { component: name } });
}
