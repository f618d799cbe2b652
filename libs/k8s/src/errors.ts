import { AsterismError } from '@asterism/errors';

/** Codes of Kubernetes API failures, by what a caller does about them. */
export type K8sErrorCode =
  | 'K8S_NOT_FOUND'
  | 'K8S_ALREADY_EXISTS'
  | 'K8S_CONFLICT'
  | 'K8S_FORBIDDEN'
  | 'K8S_INVALID'
  | 'K8S_UNAVAILABLE'
  | 'K8S_CONFIG_INVALID'
  | 'NODE_NAME_INVALID'
  | 'CONTROL_PLANE_JOIN_IN_PROGRESS';

/** A Kubernetes API call failed; `details.status` holds the HTTP status when there was one. */
export class K8sError extends AsterismError<K8sErrorCode> {}

/** Maps a client-node ApiException (or a network error) to a K8sError with context. */
export function fromApiError(err: unknown, context: string): K8sError {
  const status = typeof (err as { code?: unknown })?.code === 'number' ? ((err as { code: number }).code as number) : undefined;
  let reason = '';
  const body = (err as { body?: unknown })?.body;
  if (typeof body === 'string') {
    try {
      reason = String((JSON.parse(body) as { message?: unknown }).message ?? '');
    } catch {
      reason = body.slice(0, 200);
    }
  } else if (body && typeof body === 'object') {
    reason = String((body as { message?: unknown }).message ?? '');
  }
  const text = `${context}: ${reason || (err instanceof Error ? err.message : String(err))}`;
  const details = { status, context };
  switch (status) {
    case 404:
      return new K8sError('K8S_NOT_FOUND', text, { details, cause: err });
    case 409:
      return new K8sError(/already exists/i.test(reason) ? 'K8S_ALREADY_EXISTS' : 'K8S_CONFLICT', text, { details, cause: err });
    case 401:
    case 403:
      return new K8sError('K8S_FORBIDDEN', text, { details, cause: err });
    case 400:
    case 422:
      return new K8sError('K8S_INVALID', text, { details, cause: err });
    default:
      return new K8sError('K8S_UNAVAILABLE', text, { details, cause: err });
  }
}
