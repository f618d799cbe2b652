import * as k8s from '@kubernetes/client-node';
import { K8sError } from './errors.js';
import { KeepAliveKubeConfig } from './keep-alive.js';

/** The typed API clients the Asterism services use. */
export interface KubeClients {
  config: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
}

/**
 * Builds clients from a KubeConfig. They share one keep-alive connection pool (KeepAliveKubeConfig):
 * a plain KubeConfig is converted, so callers never pay a TLS handshake per request.
 */
export function clientsFromConfig(source: k8s.KubeConfig): KubeClients {
  const config = KeepAliveKubeConfig.from(source);
  return { config, core: config.makeApiClient(k8s.CoreV1Api), custom: config.makeApiClient(k8s.CustomObjectsApi) };
}

/** Loads a kubeconfig file (e.g. the admin kubeconfig of a test control plane). */
export function clientsFromKubeconfigFile(path: string): KubeClients {
  const config = new KeepAliveKubeConfig();
  try {
    config.loadFromFile(path);
  } catch (err) {
    throw new K8sError('K8S_CONFIG_INVALID', `loading kubeconfig ${path}: ${(err as Error).message}`, { cause: err });
  }
  return clientsFromConfig(config);
}

/** In-cluster clients (service account token); `rootPrefix` lets tests point at a fake root. */
export function clientsInCluster(rootPrefix = ''): KubeClients {
  const config = new KeepAliveKubeConfig();
  try {
    config.loadFromCluster(rootPrefix);
  } catch (err) {
    throw new K8sError('K8S_CONFIG_INVALID', `loading in-cluster config: ${(err as Error).message}`, { cause: err });
  }
  if (!config.getCurrentCluster()?.server || config.getCurrentCluster()?.server.includes('undefined')) {
    throw new K8sError('K8S_CONFIG_INVALID', 'not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set');
  }
  return clientsFromConfig(config);
}
