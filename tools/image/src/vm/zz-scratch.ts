import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { Vm } from './vm.js';
const dir = '/tmp/vmnodes-scratch/run1';
mkdirSync(dir, { recursive: true });
const disk = `${dir}/state.raw`;
writeFileSync(disk, '');
truncateSync(disk, 64 * 1024 * 1024);
const vm = await Vm.boot({ image: 'dist/image/node-image.raw', dir, stateDisk: disk });
try {
  await vm.waitForConsole(/state disk service started|"level":"error"/, 600_000);
  await new Promise((r) => setTimeout(r, 3000));
  console.log(`elapsed ${((Date.now() - vm.startedAt) / 1000).toFixed(1)} s`);
} finally {
  await vm.stop();
}
