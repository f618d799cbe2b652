/**
 * The API server audit policy every control plane writes to /etc/kubernetes/audit-policy.yaml
 * before kubeadm runs (docs/protocol/kubernetes.md). Metadata only: request and response bodies
 * are never logged, because they carry Secrets, bootstrap tokens and ConfigMaps with key material.
 * Health probes, the kubelets' and controllers' high-volume reads and events are not audited.
 */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
  - RequestReceived
rules:
  - level: None
    nonResourceURLs:
      - /healthz*
      - /livez*
      - /readyz*
      - /version
  - level: None
    resources:
      - group: ""
        resources: ["events"]
      - group: "coordination.k8s.io"
        resources: ["leases"]
  - level: None
    verbs: ["get", "list", "watch"]
    userGroups: ["system:nodes"]
  - level: Metadata
`;
