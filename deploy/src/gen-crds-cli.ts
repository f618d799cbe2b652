/** `npx tsx deploy/src/gen-crds-cli.ts` — regenerates deploy/charts/joinservice/crds/ from libs/k8s. */
import { mkdirSync } from 'node:fs';
import { CRD_DIR, writeChartCrds } from './crds.js';

mkdirSync(CRD_DIR, { recursive: true });
for (const p of writeChartCrds()) process.stdout.write(`wrote ${p}\n`);
