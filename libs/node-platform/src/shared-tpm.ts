/** The node's TPM as one client per process, opened from `--tpm` (a device, or swtpm over a socket). */
import { DeviceTransport, SocketTransport, TpmClient, type TpmTransport } from '@asterism/tpm';
import { readClusterIdPcr } from '@asterism/nodelock';

/** Reads the node's cluster-ID register (PCR 15, or RTMR2 on qemu-tdx): whether this boot already marked the node. */
export interface MarkReader {
  readMark(): Promise<Buffer>;
}

/** Opens the transport named by `--tpm`: a device path, `unix:<path>` or `tcp:<host>:<port>`. */
export async function openTransport(spec: string): Promise<TpmTransport> {
  if (spec.startsWith('unix:')) return SocketTransport.connect({ path: spec.slice(5) });
  const tcp = /^tcp:(.+):(\d+)$/.exec(spec);
  if (tcp) return SocketTransport.connect({ host: tcp[1]!, port: Number(tcp[2]) });
  return DeviceTransport.open(spec);
}

/**
 * One TPM client for the whole process (swtpm serves one connection; the kernel resource manager
 * does not care). Opened lazily, TPM2_Startup sent once (an already started TPM is fine). On open,
 * transient objects left by an earlier bootstrapper that died mid-issuance are flushed: swtpm has
 * no resource manager, and three leftover attestation keys make every later quote fail with
 * TPM_RC_OBJECT_MEMORY. Nothing else uses the TPM's transient slots on a node before we run.
 */
export class SharedTpm implements MarkReader {
  #client: Promise<TpmClient> | undefined;

  constructor(
    private readonly spec: string,
    /** Told how many leftover transient objects were flushed on open (for a log line). */
    private readonly onLeftoversFlushed: (count: number) => void = () => undefined,
  ) {}

  open = (): Promise<TpmClient> => {
    this.#client ??= (async () => {
      const client = new TpmClient(await openTransport(this.spec));
      await client.startup('clear');
      const flushed = await client.flushTransientObjects();
      if (flushed > 0) this.onLeftoversFlushed(flushed);
      return client;
    })().catch((err: unknown) => {
      this.#client = undefined;
      throw err;
    });
    return this.#client;
  };

  /** SHA-256 PCR 15. */
  async readMark(): Promise<Buffer> {
    return readClusterIdPcr(await this.open());
  }

  async close(): Promise<void> {
    const c = await this.#client?.catch(() => undefined);
    await c?.transport.close();
  }
}
