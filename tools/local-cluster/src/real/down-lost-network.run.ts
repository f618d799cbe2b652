/** Runs the lost-network `down` check under the cluster lock (see down-lost-network.int.spec.ts). */
import { checkDownLeavesWinnersNetwork } from './down-lost-network.check.js';

console.log(await checkDownLeavesWinnersNetwork());
