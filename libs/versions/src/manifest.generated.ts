import type { VersionRow } from './manifest.js';

/** placeholder */
export const MANIFEST: readonly VersionRow[] = [];
