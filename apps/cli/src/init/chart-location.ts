import { fileURLToPath } from 'node:url';

/** The asterism-services chart of this source tree (apps/cli/src/init -> deploy/charts). */
export const DEFAULT_CHART_DIR = fileURLToPath(new URL('../../../../deploy/charts/asterism-services', import.meta.url));
