/** Why a downstream request was refused; mapped to a GraphQL error with this code in api/domain-errors.ts. */
export type DownstreamRefusalCode = 'UNKNOWN_PROCESSOR' | 'PURGE_NOT_FOUND' | 'PROCESSOR_EXISTS';

export class DownstreamRefusal extends Error {
  override name = 'DownstreamRefusal';

  constructor(
    readonly code: DownstreamRefusalCode,
    message: string,
  ) {
    super(message);
  }
}
