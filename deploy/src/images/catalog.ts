/**
 * Every container image a local node needs, built on this machine (docs/adr/0018): the
 * control-plane images kubeadm's static pods and addons name (from the Go-built Kubernetes
 * binaries), the Asterism services (esbuild bundles + this machine's Node 20 runtime: joinservice,
 * keyservice, and the verification service every node runs) and a tiny
 * workload image. Each entry says what goes into its rootfs and how the image starts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { APP_NODE_FLAGS } from '../node-flags.js';
import type { RootfsStage } from './rootfs.js';

/** Version of the Kubernetes images: the pinned module's. */
export const KUBERNETES_VERSION = 'v1.34.4';
/** Tag of the Asterism images: the charts' appVersion. */
export const ASTERISM_IMAGE_TAG = '0.1.0';
/** Repository prefix of every local image (kubeadm `imageRepository`, chart `image.repository`). */
export const LOCAL_IMAGE_REPOSITORY = 'localhost/asterism';

/** What an image needs from the build machine. */
export interface ImageInputs {
  /** Folder with the Kubernetes binaries, etcd, etcdctl and pause (tools/k8s-testenv). */
  k8sBinDir: string;
  /** Folder with the app bundles (`<app>/main.mjs`, deploy/src/bundle.ts). */
  bundleDir: string;
  /** The Node.js runtime copied into the service images. */
  nodeBinary: string;
  /** Unpacked roots of the pinned Debian packages the catalog names (debian-pins.ts), by package. */
  debianRoots?: Record<string, string>;
}

/** Process settings of an image (the OCI config). */
export interface ImageConfig {
  entrypoint: string[];
  cmd?: string[];
  env?: string[];
  user?: string;
  workdir?: string;
  ports?: number[];
}

/** One image: name (below the repository), tag, rootfs contents, config, and the node roles that import it. */
export interface ImageSpec {
  name: string;
  tag: string;
  stage(rootfs: RootfsStage, inputs: ImageInputs): void;
  config: ImageConfig;
  /** `control-plane` images are imported only on control-plane nodes, `all` everywhere. */
  nodes: 'control-plane' | 'all';
  /** Pinned Debian packages (debian-pins.json) the stage step needs in `inputs.debianRoots`. */
  pinnedPackages?: readonly string[];
}

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** glibc and the C++ runtime: what /usr/bin/node links against. */
const NODE_RUNTIME_PACKAGES = ['libc6', 'libstdc++6', 'libgcc-s1'];
/**
 * What kube-proxy's iptables mode runs: iptables (nft backend), conntrack, and their libraries.
 * Pinned (debian-pins.json), not taken from the build machine: the archive's hash is in the
 * versions manifest and must hold on any machine (docs/adr/0034-components-by-version.md).
 */
const KUBE_PROXY_PACKAGES = ['libc6', 'iptables', 'libxtables12', 'libip4tc2', 'libip6tc2', 'libnftnl11', 'libmnl0', 'libnetfilter-conntrack3', 'libnfnetlink0', 'conntrack', 'netbase'];

/** A single static Go binary at /usr/local/bin (kubeadm's manifests call it by name). */
function goBinaryImage(name: string, tag: string, binaries: string[]): ImageSpec {
  return {
    name,
    tag,
    nodes: 'control-plane',
    stage: (rootfs, inputs) => {
      for (const b of binaries) rootfs.addFile(join(inputs.k8sBinDir, b), `/usr/local/bin/${b}`);
      rootfs.addDir('/tmp', 0o1777);
    },
    config: { entrypoint: [`/usr/local/bin/${binaries[0]}`], env: [PATH_ENV] },
  };
}

/** The chunks of a bundle and their source maps, sorted (licence texts stay out, as the entry's do). */
function bundleChunks(bundle: string): string[] {
  const dir = join(bundle, 'chunks');
  return existsSync(dir) ? readdirSync(dir).filter((f) => /\.mjs(\.map)?$/.test(f)).sort() : [];
}

/** Bundled programs that run as pods (deploy/src/bundle.ts). */
export const SERVICE_BUNDLES = ['joinservice', 'keyservice', 'verification-service', 'attestation-monitor'] as const;

/**
 * An Asterism service: the esbuild bundle at /app (main.mjs and its lazily loaded chunks), Node at
 * /usr/bin/node, unprivileged by default.
 */
function serviceImage(app: (typeof SERVICE_BUNDLES)[number], ports: number[], nodes: ImageSpec['nodes']): ImageSpec {
  return {
    name: app,
    tag: ASTERISM_IMAGE_TAG,
    nodes,
    stage: (rootfs, inputs) => {
      rootfs.addDebianPackages(NODE_RUNTIME_PACKAGES);
      rootfs.addFile(inputs.nodeBinary, '/usr/bin/node');
      const bundle = join(inputs.bundleDir, app);
      rootfs.addFile(join(bundle, 'main.mjs'), '/app/main.mjs');
      rootfs.addFile(join(bundle, 'main.mjs.map'), '/app/main.mjs.map');
      // The program's chunks (deploy/src/bundle.ts), with their source maps.
      for (const chunk of bundleChunks(bundle)) rootfs.addFile(join(bundle, 'chunks', chunk), `/app/chunks/${chunk}`);
      rootfs.addDir('/tmp', 0o1777);
    },
    config: { entrypoint: ['/usr/bin/node', '--enable-source-maps', ...APP_NODE_FLAGS[app], '/app/main.mjs'], env: [PATH_ENV, 'NODE_ENV=production'], user: '65532:65532', workdir: '/app', ports },
  };
}

/**
 * The tags kubeadm expects for `name` images (`kubeadm config images list`), e.g.
 * `{ etcd: '3.6.5-0', pause: '3.10.1', ... }`: images are tagged so static pods need no overrides.
 */
export function kubeadmImageTags(kubeadm: string, kubernetesVersion = KUBERNETES_VERSION): Record<string, string> {
  const out = execFileSync(kubeadm, ['config', 'images', 'list', '--kubernetes-version', kubernetesVersion, '--image-repository', LOCAL_IMAGE_REPOSITORY], { encoding: 'utf8' });
  return parseImageList(out);
}

/** Parses `<repo>/<name>:<tag>` lines into name -> tag. */
export function parseImageList(text: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const m = /^(?:.*\/)?([^/:]+):([^/:]+)$/.exec(line);
    if (m) tags[m[1]!] = m[2]!;
  }
  return tags;
}

/**
 * The image catalog. `etcdTag`/`pauseTag` are what kubeadm asks for (`kubeadm config images
 * list`), so static pods find them without overrides in the cluster configuration; the Kubernetes
 * images are tagged with `kubernetesVersion` (default: the pinned module's).
 */
export function imageCatalog(tags: { etcd: string; pause: string }, kubernetesVersion = KUBERNETES_VERSION): ImageSpec[] {
  return [
    { ...goBinaryImage('pause', tags.pause, ['pause']), nodes: 'all', config: { entrypoint: ['/usr/local/bin/pause'], env: [PATH_ENV] } },
    goBinaryImage('etcd', tags.etcd, ['etcd', 'etcdctl']),
    goBinaryImage('kube-apiserver', kubernetesVersion, ['kube-apiserver']),
    goBinaryImage('kube-controller-manager', kubernetesVersion, ['kube-controller-manager']),
    goBinaryImage('kube-scheduler', kubernetesVersion, ['kube-scheduler']),
    {
      name: 'kube-proxy',
      tag: kubernetesVersion,
      nodes: 'all',
      pinnedPackages: KUBE_PROXY_PACKAGES,
      stage: (rootfs, inputs) => {
        for (const pkg of KUBE_PROXY_PACKAGES) {
          const root = inputs.debianRoots?.[pkg];
          if (!root) throw new Error(`pinned Debian package ${pkg} was not fetched (buildLocalImages fetches pinnedPackages)`);
          rootfs.addPackageTree(root);
        }
        rootfs.addFile(join(inputs.k8sBinDir, 'kube-proxy'), '/usr/local/bin/kube-proxy');
        // Debian creates the plain names with update-alternatives at install time, not in the package.
        for (const tool of ['iptables', 'iptables-save', 'iptables-restore', 'ip6tables', 'ip6tables-save', 'ip6tables-restore']) rootfs.addSymlink('xtables-nft-multi', `/usr/sbin/${tool}`);
        rootfs.addDir('/run', 0o755);
        rootfs.addDir('/tmp', 0o1777);
      },
      config: { entrypoint: ['/usr/local/bin/kube-proxy'], env: [PATH_ENV] },
    },
    serviceImage('joinservice', [9090, 9092], 'control-plane'),
    serviceImage('keyservice', [9000, 9101], 'control-plane'),
    // Every node serves its own attestation (the chart's DaemonSet, docs/adr/0028).
    serviceImage('verification-service', [9090, 8080], 'all'),
    // Continuous attestation (docs/adr/0037): a Deployment on the control planes.
    serviceImage('attestation-monitor', [9206], 'control-plane'),
    {
      name: 'busybox',
      tag: '1.35',
      nodes: 'all',
      stage: (rootfs) => {
        rootfs.addFile('/bin/busybox', '/usr/bin/busybox');
        for (const applet of ['sh', 'echo', 'sleep', 'cat', 'ls', 'date', 'hostname', 'wget', 'nc']) rootfs.addSymlink('busybox', `/usr/bin/${applet}`);
        rootfs.addDir('/tmp', 0o1777);
      },
      config: { entrypoint: [], cmd: ['/usr/bin/sh'], env: [PATH_ENV] },
    },
  ];
}
