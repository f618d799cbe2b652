/**
 * The node runtime (docs/adr/0036-node-runtime.md): everything about a node that differs between
 * the ways a bootstrapper runs: who creates or joins the Kubernetes cluster, who runs the kubelet
 * and reboots the node, and whether this process stays after bootstrapping. The bootstrapper's
 * stages (boot.ts) call only this interface; each composition root picks one implementation:
 * apps/bootstrapper/src/main.ts the kubeadm runtime (systemd, or an external supervisor), the
 * local-cluster tool its simulated runtime (tools/simulated-node).
 */
import type { Issuer } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import type { MetadataProvider } from '@asterism/metadata';
import type { BootstrapperConfig } from '../flags.js';
import type { ClusterInitializer } from '../initserver/ports.js';
import type { ClusterJoiner } from '../joinclient/ports.js';
import type { RunResult } from '../run.js';
import type { NodeFileWriter } from '../state/file-writer.js';

/** What a runtime is built from: the parsed flags and the node's shared pieces. */
export interface NodeRuntimeContext {
  cfg: BootstrapperConfig;
  metadata: MetadataProvider;
  files: NodeFileWriter;
  logger: Logger;
}

/** Builds the runtime of a composition root (called once, after the node's pieces exist). */
export type NodeRuntimeFactory = (ctx: NodeRuntimeContext) => NodeRuntime;

/** What a finished bootstrap hands the runtime to decide whether the process stays. */
export interface AfterBoot {
  result: RunResult;
  /** The node's issuer (its TPM connection is still open). */
  issuer: Issuer;
  /** Closes the recovery server, flushes the attestation keys and closes the TPM connection. */
  releasePlatform(): Promise<void>;
}

/** A process that stays as the node's agent: stopped on SIGTERM. */
export interface ResidentAgent {
  /** Why it stays (logged). */
  reason: string;
  /** Stops what the runtime serves or supervises (the node's TPM is released by the caller). */
  stop(): Promise<void>;
}

/** One way of running a node (see the module comment). */
export interface NodeRuntime {
  /** For logs: `kubeadm/systemd`, `kubeadm/none`, `simulated`. */
  readonly name: string;
  /** Creates the cluster on the first control plane. */
  readonly initializer: ClusterInitializer;
  /** Joins this node with a ticket. */
  readonly joiner: ClusterJoiner;
  /**
   * Whether the recovery server keeps answering (refusing) after the disk key arrived: a process
   * that stays resident keeps it; one that exits closes it.
   */
  readonly keepsRecoveryServer: boolean;
  /**
   * A node already marked in this boot only starts its Kubernetes agent (the kubelet). Resolves
   * once the start was handed over: under systemd the caller may exit right after, and systemd
   * stops whatever this process left running in its service.
   */
  startNodeAgent(): void | Promise<void>;
  /** The node must reboot: stop what this process supervises and ask for the reboot (the caller exits). */
  reboot(): Promise<void>;
  /** After bootstrapping: a resident agent, or undefined when the process may exit (after `releasePlatform`). */
  afterBoot(boot: AfterBoot): Promise<ResidentAgent | undefined>;
}
