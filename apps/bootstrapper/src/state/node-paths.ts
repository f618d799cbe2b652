/**
 * Files a node writes while it joins or initialises (SSH CA and host certificate, kubelet
 * credentials, control-plane PKI), read by the node's services after the bootstrapper is done
 * (docs/protocol/constants.md). One home for the JoinClient and the emergency-SSH setup.
 */
export const NODE_PATHS = {
  sshCaPublicKey: '/var/run/state/ssh/ssh_ca.pub',
  sshHostCertificate: '/var/run/state/ssh/ssh_host_cert.pub',
  kubeletCert: '/run/state/kubelet/pki/kubelet-client-crt.pem',
  kubeletKey: '/run/state/kubelet/pki/kubelet-client-key.pem',
  kubernetesPki: '/etc/kubernetes/pki',
} as const;
