/**
 * Column specs: one runtime description per warehouse column, from which the Kysely table types (db/)
 * and the normalised record types (records.ts) are derived. test/integration/schema-types.test.ts
 * compares the tables' specs with the migrated database (names, types, nullability, defaults), so the
 * types cannot drift from the migrations. Here in domain/ because a record's fields are the pipeline's
 * own vocabulary: the parsers yield them and the warehouse stores them under the same names.
 */

import type { ColumnType, Generated } from 'kysely';

export type PgType =
  | 'text'
  | 'character'
  | 'bigint'
  | 'integer'
  | 'boolean'
  | 'date'
  | 'timestamp with time zone'
  | 'jsonb'
  | 'bytea'
  | 'ARRAY';

export interface Spec<P extends PgType = PgType, N extends boolean = boolean, D extends boolean = boolean> {
  readonly pg: P;
  readonly nullable: N;
  /** Has a default or is generated: optional on insert. */
  readonly defaulted: D;
}

type TsOf<P extends PgType> = P extends 'bigint' | 'integer'
  ? number
  : P extends 'boolean'
    ? boolean
    : P extends 'ARRAY'
      ? string[]
      : P extends 'jsonb'
        ? unknown
        : P extends 'bytea'
          ? Buffer
          : string;

type Nullable<T, N extends boolean> = N extends true ? T | null : T;

type ColumnOf<S> =
  S extends Spec<infer P, infer N, infer D>
    ? P extends 'jsonb'
      ? ColumnType<unknown, D extends true ? unknown | undefined : unknown, unknown>
      : D extends true
        ? Generated<Nullable<TsOf<P>, N>>
        : Nullable<TsOf<P>, N>
    : never;

export type TableOf<T extends Record<string, Spec>> = { -readonly [K in keyof T]: ColumnOf<T[K]> };

function kind<P extends PgType>(pg: P) {
  return {
    required: { pg, nullable: false, defaulted: false } as Spec<P, false, false>,
    nullable: { pg, nullable: true, defaulted: false } as Spec<P, true, false>,
    defaulted: { pg, nullable: false, defaulted: true } as Spec<P, false, true>,
    nullableDefaulted: { pg, nullable: true, defaulted: true } as Spec<P, true, true>,
  };
}

export const text = kind('text');
export const char = kind('character');
export const bigint = kind('bigint');
export const integer = kind('integer');
export const boolean = kind('boolean');
export const date = kind('date');
export const timestamptz = kind('timestamp with time zone');
export const jsonb = kind('jsonb');
export const textArray = kind('ARRAY');
export const bytea = kind('bytea');
