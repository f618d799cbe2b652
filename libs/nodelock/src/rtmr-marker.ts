import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMarkedValue, type NodeMarker } from './node-lock.js';

/** The RTMR the cluster ID is extended into on TDX (measurement index 3; docs/protocol/tdx-dcap.md). */
export const CLUSTER_ID_RTMR = 2;
/** RTMR length (SHA-384). */
export const RTMR_LENGTH = 48;
/** Where Linux exposes the TD's measurement registers (tdx_guest, tsm-mr). */
export const TDX_MEASUREMENTS_DIR = '/sys/class/misc/tdx_guest/measurements';

/** A TD's runtime measurement registers (consumer-declared port). */
export interface RtmrDevice {
  /** RTMR[index] := SHA384(RTMR[index] || digest); `digest` is 48 bytes. */
  extend(index: number, digest: Buffer): Promise<void>;
  read(index: number): Promise<Buffer>;
}

/**
 * RTMRs through the tdx_guest sysfs files `rtmr<N>:sha384`: writing 48 bytes extends the
 * register, reading returns its 48-byte value.
 */
export class SysfsRtmrDevice implements RtmrDevice {
  constructor(private readonly dir = TDX_MEASUREMENTS_DIR) {}

  async extend(index: number, digest: Buffer): Promise<void> {
    if (digest.length !== RTMR_LENGTH) throw new Error(`RTMR extend digest is ${digest.length} bytes, not ${RTMR_LENGTH}`);
    await writeFile(this.#file(index), digest);
  }

  async read(index: number): Promise<Buffer> {
    const value = await readFile(this.#file(index));
    if (value.length !== RTMR_LENGTH) throw new Error(`RTMR${index} read ${value.length} bytes, not ${RTMR_LENGTH}`);
    return value;
  }

  #file(index: number): string {
    if (!Number.isInteger(index) || index < 0 || index > 3) throw new Error(`RTMR index ${index} is not 0..3`);
    return join(this.dir, `rtmr${index}:sha384`);
  }
}

/**
 * Marks a TDX node as bootstrapped: RTMR2 := SHA384(RTMR2 || SHA384(clusterID)), the TDX
 * counterpart of the PCR 15 event. Only a reboot of the TD resets it.
 */
export class RtmrNodeMarker implements NodeMarker {
  constructor(private readonly openDevice: () => Promise<RtmrDevice>) {}

  async markNodeAsBootstrapped(clusterId: Uint8Array): Promise<void> {
    await (await this.openDevice()).extend(CLUSTER_ID_RTMR, createHash('sha384').update(clusterId).digest());
  }
}

/** Whether a TDX node is marked: RTMR2 is not all zero. */
export async function isRtmrNodeBootstrapped(device: RtmrDevice): Promise<boolean> {
  return isMarkedValue(await device.read(CLUSTER_ID_RTMR));
}
