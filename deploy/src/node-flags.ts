/**
 * Node.js flags each app's image runs with, between `--enable-source-maps` and the bundle in the
 * ENTRYPOINT (deploy/docker/<app>.Dockerfile, kept in step by dockerfiles.spec.ts) and in the local
 * image catalog. tools/bench keyservice-bench runs the bundle with the same flags.
 *
 * keyservice (docs/adr/0021-keyservice-throughput.md):
 * - `--max-semi-space-size=1`: a call allocates only short-lived objects; a small young generation
 *   keeps the resident set ~20 MB lower under load.
 * - `--max-old-space-size=48`: the live heap is a few MB; without a cap V8 lets the old generation
 *   grow to well over 100 MB resident before collecting.
 * - `--single-threaded`: no V8 helper threads (GC, compiler): lowest resident set; the work they
 *   would do competes for the same cores anyway.
 *
 * verification-service (docs/adr/0028): one pod on every node, idle almost always (a document
 * now and then); the same flags keep its resident set low.
 *
 * attestation-monitor (docs/adr/0037): two replicas, one round a minute; no flags (the Kubernetes
 * client's heap is larger than the keyservice's, a 48 MB cap would be tight).
 */
const LOW_MEMORY = ['--max-semi-space-size=1', '--max-old-space-size=48', '--single-threaded'] as const;

/** Node flags per program (see above). */
export const APP_NODE_FLAGS: Readonly<Record<'bootstrapper' | 'joinservice' | 'keyservice' | 'verification-service' | 'attestation-monitor', readonly string[]>> = {
  bootstrapper: [],
  joinservice: [],
  keyservice: LOW_MEMORY,
  'verification-service': LOW_MEMORY,
  'attestation-monitor': [],
};
