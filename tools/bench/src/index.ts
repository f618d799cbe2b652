export { median, quantile, ratio } from './stats.js';
