/**
 * The node image's state-disk acceptance check (docs/adr/0041-state-disk-mapper.md, docs/protocol/
 * node-image.md "State disk"), run on a TestNode whose bootstrapper waits for init or join:
 *
 * 1. First boot: the bootstrapper formatted the blank disk (LUKS2 + hmac-sha256 integrity), mapped
 *    it (crypt over integrity), mounted it and started containerd on it.
 * 2. An InitRequest with a known master secret and a marker as measurement salt: the node re-keys
 *    the disk to the key derived from the master secret and writes its node state (the marker)
 *    onto the mapped file system; the Kubernetes step fails (no cluster), so the node marks the
 *    disk for reset and reboots.
 * 3. From the host: the raw disk holds no marker bytes; its header says hmac(sha256) and opens
 *    with the derived key. The reset mark is the one thing a completed join would not have left:
 *    the harness sets the token back to "initialised", standing in for the Kubernetes join.
 * 4. Second boot: the disk stays locked; a recovery call with a wrong master secret is refused and
 *    maps nothing; the right one unlocks it, and the cluster ID the node derives comes from the
 *    marker it reads back from the disk (data written in the first boot survived).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterKms, dataKeyInfo, DERIVED_KEY_LENGTH_DEFAULT, deriveClusterId, MEASUREMENT_SECRET_KEY_ID, stateDiskKeyId, STATE_DISK_KEY_LENGTH } from '@asterism/crypto';
import { runCaptured, WORKSPACE_ROOT } from '@asterism/testing';
import type { TestNode } from './test-node.js';
import type { Vm } from './vm.js';
import { VM_ADDRESS } from './vm-network.js';

/** The init secret the state-disk test's metadata API serves the hash of. */
export const INIT_SECRET = 'vm-state-disk-test-init-secret';
/** 32 bytes the node writes (base64) into its node state on the mapped disk. */
const MARKER = Buffer.from('ASTERISM-STATE-DISK-MARKER-0001!');
const TSX = join(WORKSPACE_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');
/** One boot or one TCG-heavy step (see image.int.spec.ts). */
const STEP_TIMEOUT_MS = 600_000;

/** Runs the four steps above; logs the measured times. */
export async function checkStateDisk(node: TestNode, out: string): Promise<void> {
  const config = join(out, 'attestation-config.json');
  const master = { key: randomBytes(32), salt: randomBytes(32) };
  const kms = new ClusterKms(master);

  const formatted = await logLine(node.vm, 'state disk formatted');
  console.log(`first boot: ${JSON.stringify(formatted)}`);
  assert.equal(formatted.integrity, 'hmac-sha256');
  assert.equal(formatted.wipe, 'metadata', 'formatted without the full integrity wipe (docs/adr/0041 addendum)');
  const mapped = await logLine(node.vm, 'state disk mapped');
  assert.deepEqual(String(mapped.targets).split(',').sort(), ['state=crypt', 'state_dif=integrity']);
  assert.match(String(mapped.binds), /\/var\/lib\/containerd/);
  assert.equal((await logLine(node.vm, 'state disk service started')).unit, 'containerd.service');

  const initStarted = Date.now();
  const init = await call(node, ['init', `${VM_ADDRESS}:9000`, config, INIT_SECRET, master.key.toString('hex'), master.salt.toString('hex'), MARKER.toString('hex')]);
  assert.equal(init.ok, false, 'a node without a cluster cannot finish init');
  assert.match(node.vm.console(), /persisting node state/);
  assert.equal(await node.vm.waitForExit(STEP_TIMEOUT_MS), 0, 'the node reboots after the failed init (QEMU -no-reboot exits)');
  console.log(`init to reboot: ${((Date.now() - initStarted) / 1000).toFixed(1)} s; init said: ${init.error}`);
  assertNoReadErrors(node.vm.console(), 'first boot (format, containerd, node state, shutdown)');

  const raw = readFileSync(node.stateDisk);
  for (const form of [MARKER, Buffer.from(MARKER.toString('base64')), Buffer.from(MARKER.toString('hex')), Buffer.from('STATE-DISK-MARKER')]) {
    assert.equal(raw.indexOf(form), -1, `the raw state disk contains the marker as ${form.toString('latin1')}`);
  }
  assert.match(cryptsetup(['luksDump', node.stateDisk]).stdout, /integrity:\s+hmac\(sha256\)/);
  const uuid = cryptsetup(['luksUUID', node.stateDisk]).stdout.trim().toLowerCase();
  const diskKey = kms.getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH);
  assert.equal(cryptsetup(['open', '--test-passphrase', '--key-file=-', node.stateDisk], diskKey).status, 0, 'the init re-keyed the disk to the key derived from the master secret');
  assert.match(cryptsetup(['token', 'export', '--token-id', '0', node.stateDisk]).stdout, /"diskIsInitialized":false/, 'the failed init marked the disk for reset');
  cryptsetup(['token', 'import', '--token-id', '0', '--token-replace', node.stateDisk], JSON.stringify({ type: 'constellation-state-disk', keyslots: [], diskIsInitialized: true }));

  const vm = await node.bootAgain();
  await vm.waitForConsole(/"msg":"recovery server waiting"/, STEP_TIMEOUT_MS);
  console.log(`reboot to the recovery server waiting: ${((Date.now() - vm.startedAt) / 1000).toFixed(1)} s wall`);
  assert.doesNotMatch(vm.console(), /state disk formatted/, 'a disk with a cluster key is never formatted again');
  const wrong = await call(node, ['recover', `${VM_ADDRESS}:9999`, config, randomBytes(32).toString('hex'), master.salt.toString('hex')]);
  assert.equal(wrong.ok, false);
  assert.match(wrong.error ?? '', /does not open/);
  assert.doesNotMatch(vm.console(), /state disk (unlocked|mapped)/, 'a wrong key maps nothing');

  const unlockStarted = Date.now();
  const right = await call(node, ['recover', `${VM_ADDRESS}:9999`, config, master.key.toString('hex'), master.salt.toString('hex')]);
  assert.equal(right.ok, true, right.error);
  const recovered = await logLine(vm, 'recovered');
  console.log(`recover call to the node marked: ${((Date.now() - unlockStarted) / 1000).toFixed(1)} s; ${JSON.stringify(await logLine(vm, 'state disk unlocked'))}`);
  const measurementSecret = kms.getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), DERIVED_KEY_LENGTH_DEFAULT);
  assert.equal(recovered.clusterId, deriveClusterId(measurementSecret, MARKER).toString('hex'), 'the cluster ID comes from the node state read back from the unlocked disk');
  assert.deepEqual(String((await logLine(vm, 'state disk mapped')).targets).split(',').sort(), ['state=crypt', 'state_dif=integrity']);
  assertNoReadErrors(vm.console(), 'second boot (unlock, mount, node state read back)');
  const raw2 = readFileSync(node.stateDisk);
  assert.equal(raw2.indexOf(Buffer.from(MARKER.toString('base64'))), -1, 'still no marker on the raw disk after the unlock');
}

/**
 * The disk is formatted without the integrity wipe: a read of a never-written sector would fail
 * its tag check. The kernel logs such a failure at error level (shown despite `quiet`), and so
 * does ext4 when one of its reads fails; none may appear.
 */
function assertNoReadErrors(consoleText: string, when: string): void {
  const bad = consoleText.split('\n').filter((l) => /Checksum failed|INTEGRITY AEAD ERROR|EXT4-fs error|Buffer I\/O error|I\/O error, dev dm-/.test(l));
  assert.deepEqual(bad, [], `${when}: the kernel reported failed reads on the state disk`);
}

/** The first JSON log line of the bootstrapper on the console with message `msg` (waits for it). */
async function logLine(vm: Vm, msg: string): Promise<Record<string, unknown>> {
  const [line] = await vm.waitForConsole(new RegExp(`^.*"msg":"${msg}".*$`, 'm'), STEP_TIMEOUT_MS);
  return JSON.parse(line.slice(line.indexOf('{'), line.lastIndexOf('}') + 1)) as Record<string, unknown>;
}

/** node-calls.ts inside the VM's network namespace. */
async function call(node: TestNode, argv: string[]): Promise<{ ok: boolean; code?: number; error?: string }> {
  const [cmd, args] = node.execArgs(process.execPath, ['--import', TSX, join(import.meta.dirname, 'node-calls.ts'), ...argv]);
  const r = await runCaptured(cmd, args, { timeoutMs: STEP_TIMEOUT_MS, cwd: WORKSPACE_ROOT });
  if (r.code !== 0) throw new Error(`node-calls ${argv[0]} exited ${r.code}: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout) as { ok: boolean; code?: number; error?: string };
}

/** The host's cryptsetup on the raw disk file (header operations only); keys over stdin. */
function cryptsetup(args: string[], input?: Uint8Array | string) {
  const r = spawnSync('cryptsetup', args, { input: Buffer.from(input ?? '') });
  return { status: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
