/**
 * Acceptance tests of the node image (docs/protocol/node-image.md): build (cached by input key),
 * boot under QEMU TCG + OVMF + swtpm, predicted PCRs against what the booted vTPM quotes, a
 * changed command line or kernel, a corrupted root, and `asterism verify` against the VM.
 * Needs root (chroot, network namespaces); the boot with a network takes the machine's cluster
 * lock (src/vm/cluster-lock.ts) so it never collides with other namespace users.
 */
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { missingComponent, runCaptured, WORKSPACE_ROOT } from '@asterism/testing';
import { readImage } from './disk/image-file.js';
import { predictCommand } from './predict-command.js';
import type { Prediction } from './measure/predict.js';
import { parsePe, sectionData } from './measure/pe.js';
import { checkStateDisk, INIT_SECRET } from './vm/state-disk-check.js';
import { TestNode } from './vm/test-node.js';
import { Vm, vmToolsAvailable } from './vm/vm.js';
import { VM_ADDRESS } from './vm/vm-network.js';

const skip = process.getuid?.() === 0 && vmToolsAvailable() ? false : missingComponent('root with QEMU, OVMF and swtpm', 'run as root after tools/scripts/setup.sh');
const TSX = join(WORKSPACE_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');
const IMAGE_DIR = join(WORKSPACE_ROOT, 'dist', 'image');
const SCRIPTS = join(WORKSPACE_ROOT, 'tools', 'image', 'scripts');
/**
 * Boot to the bootstrapper waiting: the target is 60 s wall, but TCG slows down with the host's
 * load (a boot took ~5 min at load 30 on 2 cores), so the limit is generous.
 */
const BOOT_TIMEOUT_MS = 600_000;

/** Each boot test: one or two boots of up to BOOT_TIMEOUT_MS plus the checks. */
const TEST_TIMEOUT = { timeout: 25 * 60_000 };

const hex = (p: Prediction, i: number) => p.pcrs.find((x) => x.index === i)!.value.toString('hex');

/** The `asterism-pcr <i> <hex>` lines the image's asterism-pcrs unit prints to the console. */
function consolePcrs(text: string): Map<number, string> {
  return new Map([...text.matchAll(/asterism-pcr (\d+) ([0-9a-fA-F]{64})/g)].map((m) => [Number(m[1]), m[2]!.toLowerCase()]));
}

async function run(cmd: string, args: string[], timeoutMs: number) {
  const r = await runCaptured(cmd, args, { timeoutMs, cwd: WORKSPACE_ROOT });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.stderr.slice(-4000)}`);
  return r;
}

describe('node image', { skip }, () => {
  let work: string;
  const images: Record<'base' | 'cmdline' | 'kernel', { path: string; prediction: Prediction; out: string }> = {} as never;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'asterism-image-test-'));
    const started = Date.now();
    await run('bash', [join(SCRIPTS, 'build-image.sh'), '--out', IMAGE_DIR], 45 * 60_000);
    console.log(`image build (cached when inputs are unchanged) took ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const variant = async (name: 'base' | 'cmdline' | 'kernel', path: string) => {
      const out = join(work, name);
      mkdirSync(out, { recursive: true });
      images[name] = { path, out, prediction: await predictCommand({ image: path, out, records: [] }) };
    };
    await variant('base', join(IMAGE_DIR, 'node-image.raw'));
    await run('bash', [join(SCRIPTS, 'repack-uki.sh'), images.base.path, join(work, 'cmdline.raw'), '--cmdline-extra', 'asterism.test=1'], 120_000);
    await variant('cmdline', join(work, 'cmdline.raw'));
    await run('bash', [join(SCRIPTS, 'repack-uki.sh'), images.base.path, join(work, 'kernel.raw'), '--kernel-pad', '4096'], 120_000);
    await variant('kernel', join(work, 'kernel.raw'));
  }, { timeout: 60 * 60_000 });

  /** The booted base image, shared by the boot test and the state-disk test (one boot sequence in CI). */
  let node: TestNode | undefined;
  after(async () => {
    await node?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('predicts PCR 11 as systemd-measure computes it from the UKI sections', async () => {
    const pe = parsePe((await readImage(images.base.path)).uki);
    // --phase= : no boot-phase strings (the image masks systemd-pcrphase), just the UKI sections.
    const args = ['calculate', '--bank=sha256', '--phase='];
    for (const [section, flag] of [['.linux', 'linux'], ['.osrel', 'osrel'], ['.cmdline', 'cmdline'], ['.initrd', 'initrd']] as const) {
      const file = join(work, `section${section}`);
      writeFileSync(file, sectionData(pe, section)!);
      args.push(`--${flag}=${file}`);
    }
    const r = await run('/usr/lib/systemd/systemd-measure', args, 60_000);
    assert.match(r.stdout, new RegExp(`11:sha256=${hex(images.base.prediction, 11)}`, 'i'));
  });

  for (const [name, what] of [['cmdline', 'a changed kernel command line'], ['kernel', 'a changed kernel']] as const) {
    it(`${what} changes the prediction and the booted PCRs alike`, TEST_TIMEOUT, async () => {
      const changed = images[name].prediction;
      assert.notEqual(hex(changed, 11), hex(images.base.prediction, 11));
      assert.notEqual(hex(changed, 4), hex(images.base.prediction, 4));
      const booted = await bootForPcrs(images[name].path, join(work, `boot-${name}`));
      for (const p of changed.pcrs) assert.equal(booted.get(p.index), p.value.toString('hex'), `PCR ${p.index}`);
    });
  }

  it('stops the boot at dm-verity when a byte of the root file system is flipped', TEST_TIMEOUT, async () => {
    const corrupt = join(work, 'corrupt.raw');
    await run('cp', ['--reflink=auto', images.base.path, corrupt], 120_000);
    const root = (await readImage(corrupt)).gpt.partitions.find((p) => p.name === 'root')!;
    const fd = openSync(corrupt, 'r+');
    const at = Number(root.firstLba) * 512 + 1024 + 8; // inside the erofs superblock, read at mount
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, at);
    byte[0] = byte[0]! ^ 0xff;
    writeSync(fd, byte, 0, 1, at);
    closeSync(fd);
    const dir = join(work, 'boot-corrupt');
    mkdirSync(dir);
    const vm = await Vm.boot({ image: corrupt, dir });
    try {
      const code = await vm.waitForExit(BOOT_TIMEOUT_MS);
      const text = vm.console();
      assert.notEqual(code, undefined, `the corrupted image kept running:\n${text.slice(-2000)}`);
      assert.match(text, /device-mapper: verity|dm-verity|verity/i);
      assert.doesNotMatch(text, /asterism-pcr/);
    } finally {
      await vm.stop();
    }
  });

  // Last: the only boot with a network namespace, which waits for the machine's cluster lock.
  it('boots to the bootstrapper waiting for init or join; the quoted PCRs equal the prediction; asterism verify accepts it and refuses another build naming the PCR', TEST_TIMEOUT, async () => {
    const dir = join(work, 'boot-base');
    mkdirSync(dir);
    node = await TestNode.start(images.base.path, dir, `asterism-img-${process.pid}`, undefined, INIT_SECRET);
    await node.vm.waitForConsole(/"msg":"joining as"/, BOOT_TIMEOUT_MS);
    const read = await readPcrs(node, images.base.out);
    console.log(`boot to the bootstrapper's InitServer answering: ${((Date.now() - node.vm.startedAt) / 1000).toFixed(1)} s wall`);
    assert.equal(read.accepted, true, read.error);
    for (const p of images.base.prediction.pcrs) assert.equal(read.pcrs[String(p.index)], p.value.toString('hex'), `PCR ${p.index}`);

    const ok = await cli(node, ['verify', '--node', `${VM_ADDRESS}:9000`, '--variant', 'qemu-vtpm', '--attestation-config', join(images.base.out, 'attestation-config.json'), '--timeout', '300']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /accepted/);
    const refused = await cli(node, ['verify', '--node', `${VM_ADDRESS}:9000`, '--variant', 'qemu-vtpm', '--attestation-config', join(images.cmdline.out, 'attestation-config.json'), '--timeout', '300']);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    // The other build differs in its command line: the UKI hash (PCR 4), the kernel's load options (9), the sections (11).
    assert.match(refused.stdout, /Enforced measurements differ at PCR 4, 9, 11\b/);
    assert.match(refused.stdout, /refused: measurement validation failed: PCR\[4\] expected [0-9a-f]+… got [0-9a-f]+…/);
  });

  it('maps the state disk with dm-integrity, re-keys it at init, keeps ciphertext only on the raw disk, and after a reboot opens it only with the right recovery key', TEST_TIMEOUT, async () => {
    assert.ok(node, 'the boot test started the node');
    await checkStateDisk(node, images.base.out);
  });
});

/** Boots an image without network until its console shows the PCRs; returns them. */
async function bootForPcrs(image: string, dir: string): Promise<Map<number, string>> {
  mkdirSync(dir, { recursive: true });
  const vm = await Vm.boot({ image, dir });
  try {
    await vm.waitForConsole(/asterism-uptime/, BOOT_TIMEOUT_MS);
    return consolePcrs(vm.console());
  } finally {
    await vm.stop();
  }
}

/** The PCRs the node's bootstrapper quotes over aTLS (libs/tpm in the guest), validated against `out`'s config. */
async function readPcrs(node: TestNode, out: string): Promise<{ accepted: boolean; error?: string; pcrs: Record<string, string> }> {
  const [cmd, args] = node.execArgs(process.execPath, ['--import', TSX, join(WORKSPACE_ROOT, 'tools/image/src/vm/read-pcrs.ts'), `${VM_ADDRESS}:9000`, join(out, 'attestation-config.json')]);
  const r = await run(cmd, args, 360_000);
  return JSON.parse(r.stdout) as { accepted: boolean; error?: string; pcrs: Record<string, string> };
}

/** `asterism verify` inside the VM's namespace. */
function cli(node: TestNode, argv: string[]) {
  const [cmd, args] = node.execArgs(process.execPath, ['--import', TSX, join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'), ...argv]);
  return runCaptured(cmd, args, { timeoutMs: 360_000, cwd: WORKSPACE_ROOT });
}
