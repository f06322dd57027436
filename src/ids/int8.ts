/** The largest PostgreSQL int8 (2^63 − 1): the bound of every int8 column, nanosecond instants included. */
export const INT8_MAX = 2n ** 63n - 1n;
