/** Errors of the image tool: one class with string codes (docs/adr/0027 style). */
import { AsterismError } from '@asterism/errors';

/** What went wrong while reading an image or predicting its measurements. */
export type ImageErrorCode = 'PE_INVALID' | 'UKI_SECTION_MISSING' | 'GPT_INVALID' | 'ESP_READ_FAILED' | 'IMAGE_INVALID';

/** A malformed image file, boot binary or partition table. */
export class ImageError extends AsterismError<ImageErrorCode> {}
