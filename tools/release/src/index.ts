/** Release build: the CLI as a bundle and a single executable, packaged charts, service images, bootstrapper bundle, manifest. */
export { bundleCli, cliBuildFacts, type CliBuildFacts } from './cli-bundle.js';
export { buildSea, defaultSeaCache, SEA_FUSE, SEA_RESOURCE, type SeaOptions, type SeaResult } from './sea.js';
export { sha256File, sha256Parts } from './hashing.js';
