/** What a GraphQL response's errors say, for one assertion on all of them. */

type Errors = { errors?: { message: string; extensions?: Record<string, unknown> }[] };

/** The errors' codes. */
export function codes(response: Errors): unknown[] | undefined {
  return response.errors?.map((error) => error.extensions?.code);
}

/** The errors as [code, message] pairs. */
export function problems(response: Errors): unknown[][] | undefined {
  return response.errors?.map((error) => [error.extensions?.code, error.message]);
}
