/** Thin, typed helpers over @kubernetes/client-node for the joinservice, bootstrapper and tests. */
export { clientsFromConfig, clientsFromKubeconfigFile, clientsInCluster, type KubeClients } from './client.js';
export { fromApiError, K8sError, type K8sErrorCode } from './errors.js';
export {
  BootstrapTokenIssuer,
  bootstrapTokenSecret,
  DEFAULT_NODE_TOKEN_GROUP,
  formatBootstrapToken,
  generateBootstrapToken,
  JOIN_TOKEN_TTL_MS,
  type BootstrapToken,
  type BootstrapTokenSecretOptions,
} from './bootstrap-token.js';
export { ConfigMapStore } from './configmaps.js';
export { BINDING_NAMESPACE, BINDING_PREFIX, ConfigMapIdentityBindings, identityBindingName, type IdentityBinding } from './identity-bindings.js';
export { HttpsConfigMapCreator, type CreateConfigMap } from './configmap-create.js';
export { configMapFeed, WatchedIdentityBindings, type ConfigMapFeed, type WatchedIdentityBindingsOptions } from './identity-binding-cache.js';
export {
  CONTROL_PLANE_JOIN_DEADLINE_MS,
  JOIN_FIELD_MANAGER,
  JoiningNodeWriter,
  NODE_VERSION_NAME,
  NodeVersionReader,
  UPDATE_GROUP,
  UPDATE_VERSION,
  WORKER_JOIN_DEADLINE_MS,
  type JoiningNodeSpec,
} from './custom-resources.js';
export { JOINING_NODE_CRD, NODE_VERSION_CRD } from './crds.js';
export { k8sCompliantHostname } from './node-name.js';
export { componentsConfigMapName, componentsHash, decodeComponents, encodeComponents } from './components.js';
export { kubeConfigFor } from './kubeconfig.js';
export { KubeletCertificateAuthority, KubeletCertificateError, type KubeletCertificateSubject } from './kubelet-certificate.js';
export { KeepAliveKubeConfig } from './keep-alive.js';
export { SHARED_TOKEN_WINDOW_MS, SharedBootstrapTokens, type BootstrapTokenCreator, type SharedBootstrapTokensOptions } from './shared-bootstrap-token.js';
export { httpsGetText, type HttpsGetOptions } from './https-get.js';
