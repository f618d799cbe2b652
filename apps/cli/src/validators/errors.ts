import { AsterismError } from '@asterism/errors';

/**
 * The CLI cannot build the validator of a variant on this machine: credentials the variant's
 * cloud check needs are missing or unusable. Exit code 2 (a setup problem, not a refused node).
 */
export class CliValidatorError extends AsterismError<'GCP_CREDENTIALS_MISSING' | 'GCP_CREDENTIALS_INVALID'> {}
