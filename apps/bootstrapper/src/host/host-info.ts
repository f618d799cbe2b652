import { hostname as osHostname, networkInterfaces } from 'node:os';
import type { HostInfo } from './ports.js';

/** Addresses and hostname of this machine (docs/protocol/bootstrapper.md: every non-loopback interface address). */
export class OsHostInfo implements HostInfo {
  constructor(
    /** The local cluster's nodes share one machine: their "interfaces" are their metadata IPs. */
    private readonly override?: { addresses?: string[]; hostname?: string },
  ) {}

  async addresses(): Promise<string[]> {
    if (this.override?.addresses) return [...this.override.addresses];
    return Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .filter((a) => !a.internal)
      .map((a) => a.address);
  }

  async hostname(): Promise<string> {
    return this.override?.hostname ?? osHostname();
  }
}
