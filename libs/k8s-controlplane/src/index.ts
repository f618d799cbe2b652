/**
 * A real Kubernetes control plane on one machine: PKI, etcd, kube-apiserver and
 * kube-controller-manager as supervised processes. Used by integration tests (via
 * tools/k8s-testenv, which builds the binaries) and by the bootstrapper's local backend.
 */
export { adminGet, startControlPlane, type ControlPlaneBinaries, type ControlPlaneOptions, type RunningControlPlane } from './control-plane.js';
export { buildKubeconfig } from './kubeconfig.js';
export { clusterInfoKubeconfig, NODE_TOKEN_GROUP, setUpBootstrapTokenAccess } from './cluster-bootstrap.js';
export { createCa, createControlPlanePki, createLeaf, type CertAndKey, type ControlPlanePki, type LeafOptions } from './pki.js';
export { freePort, ManagedProcess, waitFor } from './processes.js';
export { setUpClusterObjects } from './cluster-objects.js';
