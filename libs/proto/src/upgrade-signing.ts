/**
 * The bytes an upgrade agent's caller signs (proto/upgrade/upgrade.proto, docs/adr/0042-upgrade-agent.md):
 * a domain prefix, then the UpgradeRequest encoded with an empty signature field. Both sides
 * encode with the same generated code, so the bytes agree.
 */
import { UpgradeRequest } from './gen/upgrade/upgrade.js';

const DOMAIN = Buffer.from('asterism-upgrade-v1\0', 'utf8');

/** What `signature` covers for `req` (its own signature field is ignored). */
export function upgradeSigningPayload(req: UpgradeRequest): Buffer {
  return Buffer.concat([DOMAIN, Buffer.from(UpgradeRequest.encode({ ...req, signature: Buffer.alloc(0) }).finish())]);
}
