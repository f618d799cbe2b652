/**
 * Regenerates fixtures/atls-certificate.der, the aTLS certificate the atls.certificate target
 * starts from (a new key and serial each time, so it is kept in the repository):
 *   npx tsx tools/fuzz/scripts/make-atls-certificate.ts
 */
import { writeFileSync } from 'node:fs';
import { ATLS_CERTIFICATE_FIXTURE, makeAtlsCertificate } from '../src/targets/vtpm.js';

writeFileSync(ATLS_CERTIFICATE_FIXTURE, await makeAtlsCertificate());
console.log(`wrote ${ATLS_CERTIFICATE_FIXTURE}`);
