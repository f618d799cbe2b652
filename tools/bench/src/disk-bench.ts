/**
 * State disk re-key benchmark with the real cryptsetup on a LUKS2 image file: the keyslot change
 * a node does on init/join (initial passphrase -> derived key) and the unlock check a rejoin
 * does, for the bootstrapper's `light` preset against cryptsetup's benchmarked default (the
 * reference's behaviour, the baseline) and the 64 MiB `light` of before issue 21. All measured
 * in the same run, alternating.
 * Run: npx tsx tools/bench/src/disk-bench.ts [iterations]   (nx run bench:bench-disk)
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, ratio } from './stats.js';

const N = Number(process.argv[2] ?? 5);
/** The keyslot arguments of `bootstrapper --state-disk-pbkdf=<preset>` (apps/bootstrapper/src/disk/state-disk.ts). */
const PRESETS: Record<string, string[]> = {
  benchmarked: [],
  // `light` until issue 21's join-latency work (docs/adr/0006, amended).
  'light-64MiB': ['--pbkdf', 'argon2id', '--pbkdf-force-iterations', '4', '--pbkdf-memory', '65536', '--pbkdf-parallel', '1'],
  light: ['--pbkdf', 'argon2id', '--pbkdf-force-iterations', '4', '--pbkdf-memory', '8192', '--pbkdf-parallel', '1'],
};

function cryptsetup(args: string[], stdin?: Buffer): number {
  const t0 = performance.now();
  const r = spawnSync('cryptsetup', args, { input: stdin });
  if (r.status !== 0) throw new Error(`cryptsetup ${args[0]} failed (exit ${r.status}): ${r.stderr?.toString().trim()}`);
  return performance.now() - t0;
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'disk-bench-'));
  try {
    const image = join(dir, 'state.img');
    const samples: Record<string, { rekey: number[]; unlock: number[] }> = {};
    for (let i = 0; i < N; i++) {
      for (const [name, args] of Object.entries(PRESETS)) {
        const s = (samples[name] ??= { rekey: [], unlock: [] });
        writeFileSync(image, '');
        truncateSync(image, 32 * 1024 * 1024);
        const initial = randomBytes(32);
        const derived = randomBytes(32);
        cryptsetup(['luksFormat', '--type', 'luks2', '--batch-mode', '--key-file=-', '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', image], initial);
        const both = Buffer.concat([initial, derived]);
        s.rekey.push(cryptsetup(['luksChangeKey', '--batch-mode', '--key-slot', '0', '--key-file=-', '--keyfile-size=32', '--new-keyfile-size=32', ...args, image, '-'], both));
        s.unlock.push(cryptsetup(['open', '--test-passphrase', '--batch-mode', '--key-file=-', image], derived));
      }
      process.stderr.write(`round ${i + 1}/${N}\n`);
    }
    const rows = Object.entries(samples).map(([preset, s]) => ({ preset, n: N, rekeyMedianMs: Math.round(median(s.rekey)), unlockMedianMs: Math.round(median(s.unlock)) }));
    const light = rows.find((r) => r.preset === 'light')!;
    const base = rows.find((r) => r.preset === 'benchmarked')!;
    console.table(rows);
    console.log(
      JSON.stringify({
        bench: 'state-disk-rekey',
        rows,
        rekeySpeedup: +ratio(base.rekeyMedianMs, light.rekeyMedianMs).toFixed(1),
        unlockSpeedup: +ratio(base.unlockMedianMs, light.unlockMedianMs).toFixed(1),
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
