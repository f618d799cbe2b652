/** Shared error base for all Asterism libraries and apps. */
export { AsterismError, isAsterismError, errorMessage } from './asterism-error.js';
