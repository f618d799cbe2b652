/** `npx tsx deploy/src/gen-schemas-cli.ts` — rewrites the charts' values.schema.json files. */
import { writeValuesSchemas } from './schemas.js';

for (const p of writeValuesSchemas()) process.stdout.write(`wrote ${p}\n`);
