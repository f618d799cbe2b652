import type * as k8s from '@kubernetes/client-node';
import { UPDATE_GROUP } from './custom-resources.js';

/**
 * CRDs of the reference's update operator that the joinservice reads and writes. Asterism does
 * not ship the operator; the charts and the local cluster install these two definitions.
 */
export const JOINING_NODE_CRD: k8s.V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `joiningnodes.${UPDATE_GROUP}` },
  spec: {
    group: UPDATE_GROUP,
    scope: 'Cluster',
    names: { plural: 'joiningnodes', singular: 'joiningnode', kind: 'JoiningNode', listKind: 'JoiningNodeList' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              spec: {
                type: 'object',
                properties: {
                  componentsreference: { type: 'string' },
                  deadline: { type: 'string', format: 'date-time' },
                  iscontrolplane: { type: 'boolean' },
                  name: { type: 'string' },
                },
              },
              status: { type: 'object' },
            },
          },
        },
      },
    ],
  },
};

/** NodeVersion: only `spec.kubernetesComponentsReference` is read by the joinservice. */
export const NODE_VERSION_CRD: k8s.V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `nodeversions.${UPDATE_GROUP}` },
  spec: {
    group: UPDATE_GROUP,
    scope: 'Cluster',
    names: { plural: 'nodeversions', singular: 'nodeversion', kind: 'NodeVersion', listKind: 'NodeVersionList' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              spec: {
                type: 'object',
                properties: {
                  imageReference: { type: 'string' },
                  imageVersion: { type: 'string' },
                  kubernetesComponentsReference: { type: 'string' },
                  kubernetesClusterVersion: { type: 'string' },
                },
              },
              status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
            },
          },
        },
      },
    ],
  },
};
